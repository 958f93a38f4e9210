// The page's state and its one reducer: every change is an action through dispatch, and the
// reducer is pure (it returns a new state, never touches the old one or the page), so Node tests it.
// What is not state lives elsewhere: the socket in socket.js, each thread's drawn log in views.js.
import { agentLabel } from './format.js';

export function initialState() {
  return {
    agents: [],
    defaultAgent: null,
    nodes: [],
    threads: new Map(), // threadId -> thread (newThread's shape), in the order the page heard of them
    current: null, // the thread shown
    pendingThread: null, // clientRef of a new_thread we wait for
    attachments: [], // images for the next message: { mimeType, data, preview, name }
    agentImages: {}, // agentId -> whether it takes images (from its threads' prompt_capabilities)
    lastPrompt: null, // kept until the server takes it: refused, it comes back to the composer
    reasons: {}, // why a question ended without an answer: slug -> words (GET /api/reasons)
  };
}

export function newThread(id) {
  return { info: { threadId: id }, lastSeq: 0, busy: false, pending: 0 };
}

// The state with one thread changed by `change` (a function of the thread, or fields to set); a
// thread the page did not know is made first.
function withThread(state, id, change) {
  const threads = new Map(state.threads);
  const t = threads.get(id) || newThread(id);
  threads.set(id, typeof change === 'function' ? change(t) : { ...t, ...change });
  return { ...state, threads };
}

export function reduce(state, action) {
  const id = action.threadId;
  switch (action.type) {
    case 'welcome': {
      const threads = new Map(state.threads);
      for (const t of action.threads) {
        const known = threads.get(t.threadId) || newThread(t.threadId);
        threads.set(t.threadId, { ...known, info: t, busy: t.busy, pending: t.pending || 0 });
      }
      return { ...state, agents: action.agents, defaultAgent: action.defaultAgent, nodes: action.nodes || [], threads };
    }
    case 'thread_asked':
      return { ...state, pendingThread: action.clientRef };
    case 'thread': {
      // A thread made here, in another tab or from an IM chat; or one titled, archived or restored.
      const known = state.threads.get(id);
      return withThread(state, id, (t) => {
        let info = t.info;
        if (!known) info = { threadId: id, agent: action.agent, title: action.title || null, busy: false, node: action.node };
        else if (action.title) info = { ...info, title: action.title };
        return { ...t, info: { ...info, archived: !!action.archived } };
      });
    }
    case 'thread_deleted': {
      const threads = new Map(state.threads);
      threads.delete(id);
      return { ...state, threads, current: state.current === id ? null : state.current };
    }
    case 'pending': {
      let next = state;
      for (const [tid, count] of Object.entries(action.counts || {})) next = withThread(next, tid, { pending: count });
      return next;
    }
    case 'opened': {
      // Each thread keeps its own draft: what was typed stays with the thread it was typed for.
      let next = state;
      if (state.current && state.current !== id) next = withThread(next, state.current, { draft: action.draft });
      if (!next.threads.has(id)) next = withThread(next, id, {});
      return { ...next, current: id, attachments: [] };
    }
    case 'closed':
      return { ...state, current: null };
    case 'turn':
      return withThread(state, id, { busy: action.busy });
    case 'seq':
      return withThread(state, id, { lastSeq: action.seq });
    case 'titled': // from its first message, until it is given a title
      return withThread(state, id, (t) => (t.info.title ? t : { ...t, info: { ...t.info, title: action.title } }));
    case 'images': {
      const t = state.threads.get(id) || newThread(id);
      return { ...withThread(state, id, { images: action.image }),
        agentImages: { ...state.agentImages, [t.info.agent]: action.image } };
    }
    case 'modes':
      return withThread(state, id, { modes: action.modes });
    case 'mode':
      return withThread(state, id, (t) => (t.modes ? { ...t, modes: { ...t.modes, currentModeId: action.modeId } } : t));
    case 'config':
      return withThread(state, id, { config: action.configOptions });
    case 'usage':
      return withThread(state, id, { usage: action.usage });
    case 'commands':
      return withThread(state, id, { commands: action.commands });
    case 'plan':
      return withThread(state, id, { plan: action.entries });
    case 'attachments':
      return { ...state, attachments: action.attachments };
    case 'prompt_kept':
      return { ...state, lastPrompt: action.prompt };
    case 'reasons':
      return { ...state, reasons: action.reasons };
    default:
      throw new Error('unknown action ' + action.type);
  }
}

export function createStore(reducer, state) {
  const listeners = [];
  return {
    get state() { return state; },
    dispatch(action) {
      const before = state;
      state = reducer(state, action);
      for (const listener of listeners) listener(state, before);
    },
    subscribe(listener) { listeners.push(listener); },
  };
}

// ---- what views read ----

export const thread = (state, id) => state.threads.get(id);

// The newest thread still listed (not archived): where a page goes when its thread goes.
export function newestListed(state) {
  return [...state.threads.values()].reverse().find((t) => !t.info.archived) || null;
}

export const totalPending = (state) => [...state.threads.values()].reduce((n, t) => n + (t.pending || 0), 0);

// Whether the thread list shows something else after a change: an event's seq, a draft or a
// thread's usage leave it as it is (those come many times a second).
export function listChanged(before, after) {
  if (before.current !== after.current || before.agents !== after.agents) return true;
  if (before.threads === after.threads) return false;
  if (before.threads.size !== after.threads.size) return true;
  for (const [id, t] of after.threads) {
    const b = before.threads.get(id);
    if (!b || b.info !== t.info || (b.pending || 0) !== (t.pending || 0)) return true;
  }
  return false;
}

// The thread list's rows, newest first: those listed, and the archived ones apart.
export function threadRows(state) {
  const rows = [...state.threads.values()].reverse().map((t) => ({
    key: t.info.threadId,
    title: t.info.title || 'New thread',
    agent: agentLabel(state.agents, t.info),
    current: t.info.threadId === state.current,
    pending: t.pending || 0,
    archived: !!t.info.archived,
  }));
  return { listed: rows.filter((r) => !r.archived), archived: rows.filter((r) => r.archived) };
}
