// Archiving or deleting a thread that may leave work behind: a thread with a worktree of its own
// first has its changes read, and when files are not committed or commits not merged the person is
// asked, in words, before it goes (an archive keeps the worktree; a delete discards it, its work kept
// under refs/switchboard/archive/<threadId>). When the changes cannot be read the person is asked
// all the same. A thread without a worktree is archived at once, and deleted after the usual question.
import { toast } from './dom.js';
import { store } from './state.js';
import { thread } from './store.js';
import { send } from './socket.js';
import { deleteQuestion, hasChanges, leaveQuestion } from './projects.js';

const WAIT_MS = 20000; // past this without an answer the person is asked anyway
const asked = new Map(); // clientRef of a changes frame -> {threadId, action, timer}
let refs = 0;

const go = (action, id) => (action === 'archive' ? send({ type: 'archive_thread', threadId: id, archived: true })
  : send({ type: 'delete_thread', threadId: id }));

// The person archives (`action` 'archive') or deletes ('delete') the thread `id`.
export function leave(action, id) {
  const info = thread(store.state, id)?.info;
  if (!info) return;
  // An agent at work: the gateway refuses an archive or delete in words; there is nothing to check yet.
  if (!hasChanges(info) || thread(store.state, id).busy) {
    if (action === 'delete' && !window.confirm(deleteQuestion(info.title))) return;
    go(action, id);
    return;
  }
  if ([...asked.values()].some((a) => a.threadId === id)) return; // asked already: its answer comes
  const clientRef = 'leave-' + Date.now() + '-' + (++refs);
  if (!send({ type: 'changes', threadId: id, clientRef })) return;
  const timer = setTimeout(() => answered(clientRef, null, { code: 'timeout', message: 'the gateway did not answer in time' }),
    WAIT_MS);
  asked.set(clientRef, { threadId: id, action, timer });
}

function answered(clientRef, changes, error) {
  const a = asked.get(clientRef);
  if (!a) return;
  asked.delete(clientRef);
  clearTimeout(a.timer);
  const t = thread(store.state, a.threadId);
  if (!t) return; // deleted meanwhile (in another tab)
  if (a.action === 'archive' && t.info.archived) return; // archived meanwhile
  const question = leaveQuestion(a.action, { threadId: a.threadId, title: t.info.title }, changes, error);
  if (question && !window.confirm(question)) {
    toast(a.action === 'archive' ? 'Not archived.' : 'Not deleted.');
    return;
  }
  go(a.action, a.threadId);
}

// A changes frame: one asked before an archive or delete is answered here (it also goes on to the
// Changes panel, which takes it only when it shows that thread).
export function leavingFrame(f) {
  if (f.clientRef != null && asked.has(f.clientRef)) answered(f.clientRef, f, null);
}

// An error frame for such a changes frame: the person is asked anyway (true), else not ours (false).
export function leavingRefused(f) {
  if (f.clientRef == null || !asked.has(f.clientRef)) return false;
  answered(f.clientRef, null, { code: f.code, message: f.message });
  return true;
}

// The socket went down: those answers will not come. Nothing is archived or deleted then (it could
// not be sent either); the person tries again once the page is connected.
export function leavingLost() {
  for (const [clientRef, a] of asked) {
    clearTimeout(a.timer);
    asked.delete(clientRef);
  }
}
