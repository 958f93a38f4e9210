// A thread's project in the page: the line under the thread's title (its project and branch, and a
// Changes button when it has a worktree of its own), and the Changes panel (a sheet on a phone, a
// column beside the thread on a desktop): the thread's work against its base branch, file by file,
// and the person's Commit, Merge and Discard, each said in words when done or refused, with the
// thread's project audit below. Everything the gateway sends goes in as text.
import { $, el, announce, toast } from './dom.js';
import { store, dispatch } from './state.js';
import { thread } from './store.js';
import { send } from './socket.js';
import { diffBox } from './acp.js';
import {
  actionLines, countsText, defaultCommitMessage, discardQuestion, keepQuestion, fileCounts, filesWithDiffs, hasChanges, patchRows,
  projectLine, refusalText, resultText, workingText,
} from './projects.js';

const phone = window.matchMedia('(max-width: 760px)');
let refs = 0;
const ref = (what) => what + '-' + Date.now() + '-' + (++refs);
const infoOf = (s, id) => (id ? thread(s, id)?.info : undefined);

// ---- the line under the thread's title ----

export function renderProjectBar(s = store.state) {
  const info = infoOf(s, s.current);
  const line = projectLine(s.projects, info);
  $('project-bar').hidden = !line || !$('audit').hidden;
  $('thread-project').textContent = line || '';
  $('thread-project').title = info?.baseRef ? 'Branch ' + info.branch + ', made from ' + info.baseRef : '';
  $('changes-open').hidden = !hasChanges(info);
}

// ---- opening, following and closing the panel ----

// Asks for the thread's changes, opening the panel on it.
export function showChanges(id) {
  const clientRef = ref('changes');
  if (!send({ type: 'changes', threadId: id, clientRef })) return;
  const opening = store.state.changes?.threadId !== id;
  dispatch({ type: 'changes_asked', threadId: id, clientRef });
  if (opening) {
    $('commit-message').value = defaultCommitMessage(infoOf(store.state, id)?.title);
    if (phone.matches) $('changes-close').focus({ preventScroll: true });
  }
}

export function closeChanges() {
  if (!store.state.changes) return;
  dispatch({ type: 'changes_closed' });
  if (!$('changes-open').hidden) $('changes-open').focus({ preventScroll: true });
}

// Another thread is shown: the panel shows its changes, or closes. While an action is under way, and
// after a discard (whose thread is archived, so the page moves on), it stays on its thread until closed.
export function followThread(id) {
  const c = store.state.changes;
  if (!c || c.threadId === id) return;
  const gone = ['discarded', 'kept'].includes(infoOf(store.state, c.threadId)?.worktree);
  if (c.pending || c.note?.action === 'discard' || c.note?.action === 'keep' || gone) return;
  if (hasChanges(infoOf(store.state, id))) showChanges(id);
  else dispatch({ type: 'changes_closed' });
}

// A turn of the panel's thread ended: what its agent wrote is shown.
export function turnEnded(id) {
  const c = store.state.changes;
  if (c && c.threadId === id && !c.asked && !c.pending && hasChanges(infoOf(store.state, id))) showChanges(id);
}

// ---- frames ----

export function changesFrame(f) {
  dispatch({ type: 'changes', threadId: f.threadId, frame: f });
}

export function projectActionFrame(f) {
  if (store.state.changes?.pending?.clientRef !== f.clientRef) {
    toast(resultText(f.action, f.result)); // asked here, but the panel was closed since
    return;
  }
  dispatch({ type: 'project_action', threadId: f.threadId, clientRef: f.clientRef, result: f.result });
  if (f.action === 'commit') $('commit-message').value = defaultCommitMessage(infoOf(store.state, f.threadId)?.title);
  if (f.action !== 'discard' && f.action !== 'keep') showChanges(f.threadId); // what the thread's branch is now
}

// An error frame the panel waits for: said in the panel (true), else not the panel's (false).
export function changesRefused(f) {
  const c = store.state.changes;
  if (!c || f.clientRef == null || (c.pending?.clientRef !== f.clientRef && c.asked !== f.clientRef)) return false;
  dispatch({ type: 'project_refused', clientRef: f.clientRef, code: f.code, message: f.message });
  return true;
}

// The socket went down: what the panel waited for may never come. Said so; Refresh shows where things stand.
export function changesLost() {
  const c = store.state.changes;
  if (c && (c.pending || c.asked)) {
    dispatch({ type: 'changes_lost', message: 'the connection to the gateway dropped before it answered; '
      + 'Refresh to see what happened' });
  }
}

// ---- the person's actions ----

function act(action, fields) {
  const c = store.state.changes;
  if (!c || c.pending) return;
  const clientRef = ref(action);
  if (send({ type: action, threadId: c.threadId, clientRef, ...fields })) {
    dispatch({ type: 'project_asked', threadId: c.threadId, action, clientRef });
  }
}

$('changes-open').addEventListener('click', () => {
  const id = store.state.current;
  if (store.state.changes?.threadId === id) closeChanges();
  else if (id) showChanges(id);
});
$('changes-close').addEventListener('click', closeChanges);
$('changes-refresh').addEventListener('click', () => store.state.changes && showChanges(store.state.changes.threadId));
$('commit-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const c = store.state.changes;
  if (!c) return;
  const message = $('commit-message').value.trim() || defaultCommitMessage(infoOf(store.state, c.threadId)?.title);
  act('commit', { message });
});
$('merge').addEventListener('click', () => act('merge', { squash: $('merge-squash').checked }));
$('discard').addEventListener('click', () => {
  const c = store.state.changes;
  const info = c && infoOf(store.state, c.threadId);
  if (!info) return;
  if (window.confirm(discardQuestion(info.title, info.branch, c.threadId))) act('discard', {});
});
$('keep').addEventListener('click', () => {
  const c = store.state.changes;
  const info = c && infoOf(store.state, c.threadId);
  if (!info) return;
  if (window.confirm(keepQuestion(info.title, info.branch))) act('keep', {});
});
document.addEventListener('keydown', (ev) => {
  if (ev.key === 'Escape' && store.state.changes && !$('app').classList.contains('menu-open')) closeChanges();
});

// ---- drawing ----

store.subscribe((s, before) => {
  const c = s.changes;
  const b = before.changes;
  if (c !== b || infoOf(s, c?.threadId) !== infoOf(before, b?.threadId)) renderPanel(s, before);
  if (s.current !== before.current || s.projects !== before.projects || s.changes !== before.changes
      || infoOf(s, s.current) !== infoOf(before, before.current)) {
    renderProjectBar(s);
    $('changes-open').setAttribute('aria-expanded', String(!!c && c.threadId === s.current));
  }
});
phone.addEventListener('change', () => renderPanel(store.state, store.state));

function renderPanel(s, before) {
  const c = s.changes;
  const open = !!c;
  $('changes').hidden = !open;
  $('app').classList.toggle('changes-open', open);
  $('chat').inert = open && phone.matches; // on a phone the sheet is the page
  if (!open) return;
  const info = infoOf(s, c.threadId) || {};
  const b = before.changes;
  $('changes-title').textContent = 'Changes: ' + (info.title || 'New thread');
  const fresh = !b || b.threadId !== c.threadId || b.data !== c.data || infoOf(before, b.threadId)?.worktree !== info.worktree;
  if (fresh) renderBody(c, info);
  renderFooter(c, info, b);
}

function renderBody(c, info) {
  const d = c.data;
  $('changes-audit').hidden = $('changes-audit-head').hidden = false;
  const branch = d?.branch || info.branch;
  const base = d?.baseRef || info.baseRef;
  $('changes-branch').textContent = branch ? branch + ' \u2192 ' + (base || '?') : '';
  if (info.worktree === 'discarded' || info.worktree === 'kept') {
    $('changes-counts').textContent = info.worktree === 'kept'
      ? 'This thread\u2019s work was kept on branch ' + info.branch + ', not merged: its worktree is removed.'
      : 'This thread\u2019s work was discarded: its worktree and branch are gone.';
    $('changes-truncated').hidden = true;
    $('changes-files').replaceChildren();
    const lines = d ? actionLines(d.actions) : [];
    $('changes-audit').replaceChildren(...lines.map((t) => el('li', null, t)));
    $('changes-audit').hidden = $('changes-audit-head').hidden = lines.length === 0;
    return;
  }
  if (!d) {
    $('changes-counts').textContent = 'Reading the changes\u2026';
    $('changes-truncated').hidden = true;
    $('changes-files').replaceChildren();
    $('changes-audit').replaceChildren();
    return;
  }
  $('changes-counts').textContent = countsText(d);
  $('changes-truncated').hidden = !d.truncated;
  const files = filesWithDiffs(d.files, d.patch);
  if (!files.length) {
    $('changes-files').replaceChildren(el('li', 'meta', 'No changes against ' + (base || 'the base branch') + '.'));
  } else {
    $('changes-files').replaceChildren(...files.map((f) => fileItem(f, files.length <= 5)));
  }
  const lines = actionLines(d.actions);
  $('changes-audit').replaceChildren(...(lines.length ? lines.map((t) => el('li', null, t))
    : [el('li', 'meta', 'Nothing committed, merged or discarded yet.')]));
}

// One changed file: its path and counts, and (opened) its diff, drawn as an agent's edit is.
function fileItem(f, open) {
  const li = el('li', 'changed-file');
  li.dataset.path = f.path;
  const details = el('details');
  details.open = open;
  const summary = el('summary');
  // A name with invisible or control characters comes with a label that shows them (<U+202E>...).
  const name = f.label || f.path;
  summary.append(el('span', 'file-path', f.from ? (f.fromLabel || f.from) + ' \u2192 ' + name : name));
  const counts = fileCounts(f);
  if (counts) {
    const n = el('span', 'file-counts');
    if (f.binary) n.append(el('span', null, counts));
    else n.append(el('span', 'added', '+' + f.added), ' ', el('span', 'removed', '\u2212' + f.removed));
    n.setAttribute('aria-label', f.binary ? 'binary file' : f.added + ' lines added, ' + f.removed + ' removed');
    summary.append(n);
  }
  details.append(summary);
  if (f.repository) {
    details.append(el('p', 'meta', 'A git repository inside the worktree: recorded as its commit, never opened '
      + 'by the gateway (its own settings could run programs).'));
  } else if (f.diff === null) details.append(el('p', 'meta', 'Its diff is past where the patch was cut short.'));
  else {
    const rows = patchRows(f.diff);
    details.append(rows.length ? diffBox(null, null, rows) : el('p', 'meta', 'No lines changed (a new empty file or a mode change).'));
  }
  li.append(details);
  return li;
}

function renderFooter(c, info, b) {
  const note = $('changes-note');
  let text = '';
  let cls = '';
  if (c.pending) text = workingText(c.pending.action);
  else if (c.note) {
    text = c.note.error ? refusalText(c.note.action, c.note.error) : resultText(c.note.action, c.note.result);
    cls = c.note.error ? ' error' : ' ok';
  } else if (c.asked && !c.data) text = workingText('changes');
  note.textContent = text;
  note.className = 'changes-note' + cls;
  note.hidden = !text;
  if (c.note && c.note !== b?.note) announce(text);
  const active = hasChanges(info);
  const d = c.data;
  // A discarded thread's work is gone from the repository's view: nothing left to act on.
  $('commit-form').hidden = $('merge-row').hidden = info.worktree === 'discarded' || info.worktree === 'kept';
  const busy = !!c.pending;
  $('changes-refresh').disabled = !active || !!c.asked;
  $('commit-message').disabled = !active || busy;
  $('commit').disabled = !active || busy || (!!d && d.uncommitted === 0);
  $('commit').title = d && d.uncommitted === 0 ? 'Every change is committed already' : 'Commit every file of the worktree';
  $('merge').disabled = !active || busy || (!!d && d.ahead === 0 && d.uncommitted === 0);
  $('merge').textContent = 'Merge into ' + (d?.baseRef || info.baseRef || 'base');
  $('merge').title = 'Land the committed work on ' + (d?.baseRef || info.baseRef || 'the base branch')
    + ' (squashed into one commit unless Squash is off)';
  $('merge-squash').disabled = !active || busy;
  $('discard').disabled = $('keep').disabled = !active || busy;
}
