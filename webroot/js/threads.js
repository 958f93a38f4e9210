// Threads: what the gateway says of them (welcome, thread and pending frames, turns), opening one
// (its log, title, selectors and draft), starting, renaming and archiving.
import { $, el, setLog, toast } from './dom.js';
import { store, dispatch } from './state.js';
import { newestListed, thread } from './store.js';
import { views, makeView } from './views.js';
import { isOpen, send } from './socket.js';
import { renderConfig, renderModes, renderPlan, renderUsage } from './acp.js';
import { showAudit } from './audit.js';
import { setMenu } from './menu.js';
import { refreshKnocks, refreshPool } from './sidebar.js';
import { changesLost, followThread, renderProjectBar, turnEnded } from './changes.js';
import { pickerFields, renderPicker, startingLost, threadStarted } from './picker.js';
import { leave, leavingLost } from './leaving.js';
import { pushOffered, notifyHere } from './push.js';
import { reveal, want, wanted } from './deeplink.js';
import { rulesLost, showRules } from './rulesview.js';
import { showUsage, usageLost } from './usageview.js';

export function welcome(f) {
  const select = $('agent-select');
  // After a reconnect the person's choice stays (while the gateway still has that agent).
  const chosenAgent = f.agents.some((a) => a.id === select.value) ? select.value : f.defaultAgent;
  select.replaceChildren(...f.agents.map((a) => {
    const o = el('option', null, a.name);
    o.value = a.id;
    o.selected = a.id === chosenAgent;
    return o;
  }));
  // Cluster mode with several agent nodes: the person picks the host a new thread runs on.
  const nodes = f.nodes || [];
  const pick = $('node-select');
  const previous = pick.value;
  pick.replaceChildren(...nodes.map((n) => {
    const o = el('option', null, n);
    o.value = n;
    o.selected = n === previous;
    return o;
  }));
  pick.hidden = $('node-label').hidden = nodes.length < 2;
  dispatch({ type: 'welcome', agents: f.agents, defaultAgent: f.defaultAgent, nodes, threads: f.threads,
    projects: f.projects, defaultProject: f.defaultProject });
  renderPicker();
  refreshPool();
  refreshKnocks();
  pushOffered(f.push);
  // A notification's link opens its thread; else, the first time, the newest thread.
  const link = wanted();
  if (link && thread(store.state, link.threadId)) return goTo(link);
  if (link) {
    want(null);
    toast('That thread is not here any more.');
  }
  const listed = f.threads.filter((t) => !t.archived);
  if (!store.state.current && listed.length) open(listed[listed.length - 1].threadId);
}

// A link to a thread and card (a notification's): opens the thread, then shows the card once its
// history is in (landAtEnd). Before the welcome, it waits for it.
export function goTo(link) {
  if (!link) return;
  want(link);
  if (!thread(store.state, link.threadId)) return;
  if (store.state.current !== link.threadId) open(link.threadId);
  reveal(link.threadId);
}

$('new-thread').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const clientRef = 'new-' + Date.now();
  dispatch({ type: 'thread_asked', clientRef });
  const frame = { type: 'new_thread', agent: $('agent-select').value, clientRef };
  if (!$('node-select').hidden && $('node-select').value) frame.node = $('node-select').value;
  if (isOpen()) Object.assign(frame, pickerFields(clientRef)); // a project (or a scratch folder) and a branch
  send(frame);
});

// A thread made here, in another tab or from an IM chat (every page lists it at once); or titled,
// archived, restored or deleted.
export function threadFrame(f) {
  if (f.deleted) {
    // Deleted (here or in another tab): gone from the lists; a page that had it open moves on.
    const wasOpen = store.state.current === f.threadId;
    dispatch({ type: 'thread_deleted', threadId: f.threadId });
    views.delete(f.threadId);
    if (wasOpen) {
      const next = newestListed(store.state);
      if (next) open(next.info.threadId);
      else {
        $('log').replaceChildren(el('p', 'empty', 'That thread was deleted. Start a new one on the left.'));
        $('thread-title').textContent = 'No thread yet';
        $('input').disabled = true;
        $('send').disabled = true;
        renderArchive();
      }
    }
    return;
  }
  const before = thread(store.state, f.threadId);
  const archivedHere = !!before && !before.info.archived && f.archived && f.threadId === store.state.current;
  dispatch({ type: 'thread', threadId: f.threadId, agent: f.agent, title: f.title, archived: f.archived, node: f.node,
    project: f.project, branch: f.branch, baseRef: f.baseRef, worktree: f.worktree });
  threadStarted(f.clientRef);
  // It got its title (its first prompt), its agent named it, or someone renamed it.
  if (before && f.title && f.threadId === store.state.current) $('thread-title').textContent = f.title;
  renderArchive();
  if (archivedHere) {
    // Archived (here or in another tab): the page moves on to the newest thread still listed.
    const next = newestListed(store.state);
    if (next) open(next.info.threadId);
  }
  if (f.clientRef && f.clientRef === store.state.pendingThread) open(f.threadId);
}

// Questions waiting in threads, attached here or not ({threadId: count} of those that changed): a
// badge on each thread and a count in the tab's title (threadlist.js), and a notification when the
// tab is hidden (none when this device gets pushes: the gateway's push says it).
export function pendingCounts(counts) {
  const before = store.state;
  dispatch({ type: 'pending', counts });
  for (const [id, count] of Object.entries(counts || {})) {
    const more = count > (thread(before, id)?.pending || 0);
    if (more && document.hidden) {
      notifyHere('Switchboard: permission needed', { body: thread(store.state, id).info.title || 'A thread asks for your answer',
        tag: 'switchboard-' + id, data: { url: '/#thread=' + encodeURIComponent(id) } });
    }
  }
}

export function open(id) {
  const current = store.state.current;
  const draft = $('input').value;
  dispatch({ type: 'opened', threadId: id, draft });
  if (current !== id) $('input').value = thread(store.state, id).draft || '';
  let v = views.get(id);
  if (!v) {
    const log = el('section', 'log');
    log.id = 'log';
    v = makeView(id, log);
    send({ type: 'attach', threadId: id, afterSeq: 0 });
  }
  showAudit(false);
  showRules(false);
  showUsage(false);
  renderProjectBar();
  followThread(id);
  setLog(v.log);
  $('thread-title').textContent = thread(store.state, id).info.title || 'New thread';
  $('input').disabled = false;
  $('send').disabled = false;
  $('attach').disabled = false;
  renderPlan(id);
  renderModes(id);
  renderConfig(id);
  renderUsage(id);
  renderArchive();
  turn(id, thread(store.state, id).busy);
  setMenu(false);
  $('input').focus();
}

// After a reconnect: every thread this page shows, resumed from the last event it has.
export function resume() {
  for (const id of views.keys()) {
    const t = thread(store.state, id);
    if (t) send({ type: 'attach', threadId: id, afterSeq: t.lastSeq });
  }
}

// What the server said of turns no longer holds once the socket is down: the attach after the
// reconnect says it again.
export function connectionLost() {
  startingLost();
  changesLost();
  leavingLost();
  rulesLost();
  usageLost();
  $('busy').hidden = true;
  $('stop').disabled = true;
}

// The server's turn frame ends an attach: the history is in, so land at its end, not its top
// (once, after this frame's renders), or at the card a notification opened.
export function landAtEnd(id) {
  const v = views.get(id);
  if (!v || v.scrolled) return;
  v.scrolled = true;
  requestAnimationFrame(() => {
    v.log.scrollTop = v.log.scrollHeight;
    reveal(id); // a notification's card, if one was wanted
  });
}

export function turn(id, busy) {
  const was = thread(store.state, id)?.busy;
  dispatch({ type: 'turn', threadId: id, busy });
  if (was && !busy) turnEnded(id);
  refreshPool();
  if (id !== store.state.current) return;
  $('busy').hidden = !busy;
  $('stop').disabled = !busy;
}

// The archive button archives the open thread, or restores it when it is archived already.
function renderArchive() {
  const current = store.state.current;
  const archived = !!(current && thread(store.state, current)?.info.archived);
  const label = archived ? 'Restore this thread' : 'Archive this thread';
  $('archive').setAttribute('aria-label', label);
  $('archive').title = archived ? 'Restore this thread to the list' : 'Archive this thread (restore it from Archived in the thread list)';
  $('archive').classList.toggle('restoring', archived);
  $('archive').disabled = !current;
}

$('archive').addEventListener('click', () => {
  const current = store.state.current;
  if (!current) return;
  if (thread(store.state, current).info.archived) send({ type: 'archive_thread', threadId: current, archived: false });
  else leave('archive', current); // a thread with work in its worktree asks first
});

$('rename').addEventListener('click', () => {
  const current = store.state.current;
  if (!current) return;
  const title = window.prompt('Rename this thread', thread(store.state, current).info.title || '');
  if (title && title.trim()) send({ type: 'rename_thread', threadId: current, title: title.trim() });
});
