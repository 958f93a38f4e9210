// The page's state and its one reducer: every change is an action through dispatch, and the
// reducer is pure (it returns a new state, never touches the old one or the page), so Node tests it.
// What is not state lives elsewhere: the socket in socket.js, each thread's drawn log in views.js.
import { agentLabel } from './format.js';
import { projectName } from './projects.js';

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
    projects: [], // where threads may start: { id, name, worktrees: 'perThread' | 'shared', agents }
    defaultProject: null,
    // The Changes panel, while it is open: the thread it is about (not always the one shown: a
    // discarded thread's result stays until closed), the last changes frame, the clientRef of a
    // changes frame awaited, the person's action under way ({action, clientRef}) and how the last
    // one ended ({action, result} or {action, error: {code, message}}).
    changes: null,
    // The picker's sessions begun elsewhere, while its list is open: the agent and project asked
    // about, the clientRef of a sessions frame awaited (a first page, or the next one when `more`),
    // what the agent listed so far, whether it lists sessions at all (null: not answered yet), the
    // cursor of the next page, and why the gateway refused ({code, message}).
    sessions: null,
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
      return { ...state, agents: action.agents, defaultAgent: action.defaultAgent, nodes: action.nodes || [], threads,
        projects: action.projects || [], defaultProject: action.defaultProject ?? null };
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
        // Its project facts, as they are now (a merge moves nothing here; a discard ends its worktree).
        for (const k of PROJECT_FACTS) if (action[k] !== undefined) info = { ...info, [k]: action[k] };
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
    case 'changes_asked': {
      // Opens the panel on the thread (what it showed of another is dropped) and waits for its changes.
      const same = state.changes && state.changes.threadId === id;
      return { ...state, changes: same ? { ...state.changes, asked: action.clientRef }
        : { threadId: id, data: null, asked: action.clientRef, pending: null, note: null } };
    }
    case 'changes_closed':
      return { ...state, changes: null };
    case 'changes': {
      const c = state.changes;
      if (!c || c.threadId !== id) return state;
      return { ...state, changes: { ...c, data: action.frame, asked: c.asked === action.frame.clientRef ? null : c.asked } };
    }
    case 'project_asked': {
      const c = state.changes;
      if (!c || c.threadId !== id) return state;
      return { ...state, changes: { ...c, pending: { action: action.action, clientRef: action.clientRef }, note: null } };
    }
    case 'project_action': {
      const c = state.changes;
      if (!c || !c.pending || c.pending.clientRef !== action.clientRef) return state;
      return { ...state, changes: { ...c, pending: null, note: { action: c.pending.action, result: action.result || {} } } };
    }
    case 'project_refused': {
      // An error frame for the panel's action or its changes frame: said in the panel, in words.
      const c = state.changes;
      if (!c || action.clientRef == null) return state;
      const error = { code: action.code, message: action.message };
      if (c.pending && c.pending.clientRef === action.clientRef) {
        return { ...state, changes: { ...c, pending: null, note: { action: c.pending.action, error } } };
      }
      if (c.asked === action.clientRef) return { ...state, changes: { ...c, asked: null, note: { action: 'changes', error } } };
      return state;
    }
    case 'changes_lost': {
      // The socket went down while the panel waited: no answer will come for what it asked.
      const c = state.changes;
      if (!c || (!c.pending && !c.asked)) return state;
      const error = { code: 'unavailable', message: action.message };
      return { ...state, changes: { ...c, pending: null, asked: null,
        note: { action: c.pending ? c.pending.action : 'changes', error } } };
    }
    case 'sessions_asked': {
      // A first page (the list starts over) or the next one of the same list (`more`).
      const l = state.sessions;
      if (action.more && l && l.agent === action.agent && l.project === action.project) {
        return { ...state, sessions: { ...l, asked: action.clientRef, more: true, error: null } };
      }
      return { ...state, sessions: { agent: action.agent, project: action.project, asked: action.clientRef, more: false,
        list: [], supported: null, nextCursor: null, error: null } };
    }
    case 'sessions': {
      const l = state.sessions;
      const f = action.frame || {};
      if (!l || l.asked == null || l.asked !== f.clientRef) return state; // an answer to a list given up
      const listed = l.more ? l.list : [];
      const seen = new Set(listed.map((x) => x.sessionId));
      const fresh = [];
      for (const x of Array.isArray(f.sessions) ? f.sessions : []) {
        if (!x || typeof x.sessionId !== 'string' || !x.sessionId || seen.has(x.sessionId)) continue; // listed twice
        seen.add(x.sessionId);
        fresh.push(x);
      }
      return { ...state, sessions: { ...l, asked: null, more: false, list: [...listed, ...fresh],
        supported: f.supported !== false, nextCursor: (f.supported !== false && f.nextCursor) || null, error: null } };
    }
    case 'sessions_refused': {
      const l = state.sessions;
      if (!l || action.clientRef == null || l.asked !== action.clientRef) return state;
      return { ...state, sessions: { ...l, asked: null, more: false, error: { code: action.code, message: action.message } } };
    }
    case 'sessions_lost': {
      const l = state.sessions;
      if (!l || l.asked == null) return state;
      return { ...state, sessions: { ...l, asked: null, more: false, error: { code: 'unavailable', message: action.message } } };
    }
    case 'sessions_closed':
      return state.sessions ? { ...state, sessions: null } : state;
    default:
      throw new Error('unknown action ' + action.type);
  }
}

// The thread facts a project gives: its project id, branch, base branch and worktree's state.
const PROJECT_FACTS = ['project', 'branch', 'baseRef', 'worktree'];

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

// Whether an error frame's clientRef is the Changes panel's (its action or its changes frame).
export function changesAwait(state, clientRef) {
  const c = state.changes;
  return !!c && clientRef != null && (c.pending?.clientRef === clientRef || c.asked === clientRef);
}

// Whether an error frame's clientRef is the sessions list's.
export const sessionsAwait = (state, clientRef) => !!state.sessions && clientRef != null
  && state.sessions.asked === clientRef;

export const totalPending = (state) => [...state.threads.values()].reduce((n, t) => n + (t.pending || 0), 0);

// Whether the thread list shows something else after a change: an event's seq, a draft or a
// thread's usage leave it as it is (those come many times a second).
export function listChanged(before, after) {
  if (before.current !== after.current || before.agents !== after.agents || before.projects !== after.projects) return true;
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
    project: t.info.project ? projectName(state.projects, t.info.project) : null,
    current: t.info.threadId === state.current,
    pending: t.pending || 0,
    archived: !!t.info.archived,
  }));
  return { listed: rows.filter((r) => !r.archived), archived: rows.filter((r) => r.archived) };
}
