// The page's reducer and the selectors views read: node --test src/test/js
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  initialState, reduce, createStore, newestListed, totalPending, listChanged, threadRows, changesAwait, sessionsAwait,
} from '../../../webroot/js/store.js';

const welcomed = () => reduce(initialState(), {
  type: 'welcome', defaultAgent: 'demo', agents: [{ id: 'demo', name: 'Demo agent' }],
  threads: [
    { threadId: 'a', agent: 'demo', title: 'First', busy: false, pending: 0 },
    { threadId: 'b', agent: 'demo', title: null, busy: true, pending: 2 },
  ],
});

test('welcome lists the threads in order, with their busy flag and waiting questions', () => {
  const s = welcomed();
  assert.deepEqual([...s.threads.keys()], ['a', 'b']);
  assert.equal(s.threads.get('b').busy, true);
  assert.equal(s.threads.get('b').pending, 2);
  assert.equal(totalPending(s), 2);
});

test('the reducer never changes the state it was given', () => {
  const s = welcomed();
  const a = s.threads.get('a');
  const next = reduce(s, { type: 'pending', counts: { a: 3 } });
  assert.equal(s.threads.get('a'), a);
  assert.equal(a.pending, 0);
  assert.equal(next.threads.get('a').pending, 3);
});

test('a thread frame lists a new thread, titles a known one, and archives it', () => {
  let s = welcomed();
  s = reduce(s, { type: 'thread', threadId: 'c', agent: 'demo', node: 'build-1' });
  assert.deepEqual(s.threads.get('c').info, { threadId: 'c', agent: 'demo', title: null, busy: false, node: 'build-1', archived: false });
  s = reduce(s, { type: 'thread', threadId: 'a', title: 'Renamed' });
  assert.equal(s.threads.get('a').info.title, 'Renamed');
  s = reduce(s, { type: 'thread', threadId: 'a', archived: true });
  assert.equal(s.threads.get('a').info.title, 'Renamed', 'a frame without a title keeps the title');
  assert.equal(s.threads.get('a').info.archived, true);
});

test('a thread is titled from its first message only while it has no title', () => {
  let s = welcomed();
  s = reduce(s, { type: 'titled', threadId: 'a', title: 'from a message' });
  assert.equal(s.threads.get('a').info.title, 'First');
  s = reduce(s, { type: 'titled', threadId: 'b', title: 'from a message' });
  assert.equal(s.threads.get('b').info.title, 'from a message');
});

test('opening a thread keeps the draft with the thread it was typed for and empties the attachments', () => {
  let s = reduce(welcomed(), { type: 'opened', threadId: 'a', draft: 'ignored: nothing was open' });
  assert.equal(s.current, 'a');
  assert.equal(s.threads.get('a').draft, undefined);
  s = reduce(s, { type: 'attachments', attachments: [{ name: 'x.png' }] });
  s = reduce(s, { type: 'opened', threadId: 'b', draft: 'half a sentence' });
  assert.equal(s.threads.get('a').draft, 'half a sentence');
  assert.equal(s.current, 'b');
  assert.deepEqual(s.attachments, []);
});

test('deleting the open thread leaves none open, and the newest listed one is where the page goes', () => {
  let s = reduce(welcomed(), { type: 'opened', threadId: 'b', draft: '' });
  s = reduce(s, { type: 'thread', threadId: 'c', agent: 'demo', archived: true });
  s = reduce(s, { type: 'thread_deleted', threadId: 'b' });
  assert.equal(s.current, null);
  assert.equal(s.threads.has('b'), false);
  assert.equal(newestListed(s).info.threadId, 'a', 'c is archived');
});

test('what an agent says of its images is kept for the thread and for its agent', () => {
  const s = reduce(welcomed(), { type: 'images', threadId: 'a', image: false });
  assert.equal(s.threads.get('a').images, false);
  assert.deepEqual(s.agentImages, { demo: false });
});

test('a mode change without modes known changes nothing; with them it selects the mode', () => {
  let s = reduce(welcomed(), { type: 'mode', threadId: 'a', modeId: 'plan' });
  assert.equal(s.threads.get('a').modes, undefined);
  s = reduce(s, { type: 'modes', threadId: 'a', modes: { currentModeId: 'ask', availableModes: [] } });
  s = reduce(s, { type: 'mode', threadId: 'a', modeId: 'plan' });
  assert.equal(s.threads.get('a').modes.currentModeId, 'plan');
});

test('an unknown action is a mistake, not a silent no-op', () => {
  assert.throws(() => reduce(initialState(), { type: 'nonsense' }), /unknown action nonsense/);
});

test('the thread list changes with titles, counts and the open thread, not with every event', () => {
  const s = welcomed();
  assert.equal(listChanged(s, reduce(s, { type: 'seq', threadId: 'a', seq: 7 })), false);
  assert.equal(listChanged(s, reduce(s, { type: 'usage', threadId: 'a', usage: { used: 1, size: 2 } })), false);
  assert.equal(listChanged(s, reduce(s, { type: 'pending', counts: { a: 1 } })), true);
  assert.equal(listChanged(s, reduce(s, { type: 'pending', counts: { b: 2 } })), false, 'the same count');
  assert.equal(listChanged(s, reduce(s, { type: 'thread', threadId: 'a', title: 'New name' })), true);
  assert.equal(listChanged(s, reduce(s, { type: 'opened', threadId: 'a', draft: '' })), true);
});

test('thread rows come newest first, archived apart, with the agent named', () => {
  let s = reduce(welcomed(), { type: 'thread', threadId: 'c', agent: 'demo', archived: true });
  s = reduce(s, { type: 'opened', threadId: 'a', draft: '' });
  const rows = threadRows(s);
  assert.deepEqual(rows.listed.map((r) => [r.key, r.title, r.agent, r.current, r.pending]),
    [['b', 'New thread', 'Demo agent', false, 2], ['a', 'First', 'Demo agent', true, 0]]);
  assert.deepEqual(rows.archived.map((r) => r.key), ['c']);
});

test('the store hands each listener the state after and before a dispatch', () => {
  const store = createStore(reduce, initialState());
  const seen = [];
  store.subscribe((after, before) => seen.push([before.current, after.current]));
  store.dispatch({ type: 'opened', threadId: 'x', draft: '' });
  assert.deepEqual(seen, [[null, 'x']]);
  assert.equal(store.state.current, 'x');
});

const withProjects = () => reduce(initialState(), {
  type: 'welcome', defaultAgent: 'demo', agents: [{ id: 'demo', name: 'Demo agent' }],
  projects: [{ id: 'app', name: 'App', worktrees: 'perThread', agents: [] }], defaultProject: 'app',
  threads: [
    { threadId: 'a', agent: 'demo', title: 'In the app', busy: false, pending: 0, project: 'app',
      branch: 'switchboard/a', baseRef: 'main', worktree: 'active' },
    { threadId: 'b', agent: 'demo', title: 'Scratch', busy: false, pending: 0 },
  ],
});

test('welcome keeps the projects, the default one and each thread\'s project facts', () => {
  const s = withProjects();
  assert.equal(s.defaultProject, 'app');
  assert.equal(s.projects[0].name, 'App');
  assert.equal(s.threads.get('a').info.branch, 'switchboard/a');
  assert.deepEqual(initialState().projects, []);
  assert.equal(reduce(initialState(), { type: 'welcome', agents: [], threads: [] }).defaultProject, null,
    'a gateway without projects');
});

test('a thread frame brings a new thread\'s project facts, and a discard ends its worktree', () => {
  let s = reduce(withProjects(), { type: 'thread', threadId: 'c', agent: 'demo', project: 'app', branch: 'feature/x',
    baseRef: 'main', worktree: 'active' });
  assert.deepEqual([s.threads.get('c').info.project, s.threads.get('c').info.branch], ['app', 'feature/x']);
  s = reduce(s, { type: 'thread', threadId: 'a', agent: 'demo', title: 'In the app', archived: true, project: 'app',
    branch: 'switchboard/a', baseRef: 'main', worktree: 'discarded' });
  assert.equal(s.threads.get('a').info.worktree, 'discarded');
  assert.equal(s.threads.get('a').info.archived, true);
  // A frame without project facts (a rename from an older node) leaves them as they were.
  s = reduce(s, { type: 'thread', threadId: 'c', title: 'Renamed' });
  assert.equal(s.threads.get('c').info.branch, 'feature/x');
  assert.equal(s.threads.get('c').info.title, 'Renamed');
});

test('the thread list labels a thread with its project\'s name', () => {
  const rows = threadRows(withProjects()).listed;
  assert.deepEqual(rows.map((r) => r.project), [null, 'App']);
  const s = withProjects();
  assert.equal(listChanged(s, { ...s, projects: [{ id: 'app', name: 'Renamed app' }] }), true);
});

test('the Changes panel: asked, answered, an action done, an action refused, closed', () => {
  let s = reduce(withProjects(), { type: 'changes_asked', threadId: 'a', clientRef: 'c1' });
  assert.deepEqual(s.changes, { threadId: 'a', data: null, asked: 'c1', pending: null, note: null });
  assert.equal(changesAwait(s, 'c1'), true);
  const frame = { type: 'changes', threadId: 'a', files: [], patch: '', ahead: 0, uncommitted: 1, clientRef: 'c1' };
  s = reduce(s, { type: 'changes', threadId: 'a', frame });
  assert.equal(s.changes.data, frame);
  assert.equal(s.changes.asked, null);
  assert.equal(reduce(s, { type: 'changes', threadId: 'b', frame: { ...frame, threadId: 'b' } }), s,
    'another thread\'s changes are not the panel\'s');
  s = reduce(s, { type: 'project_asked', threadId: 'a', action: 'commit', clientRef: 'k1' });
  assert.deepEqual(s.changes.pending, { action: 'commit', clientRef: 'k1' });
  assert.equal(reduce(s, { type: 'project_action', threadId: 'a', clientRef: 'other', result: {} }), s);
  s = reduce(s, { type: 'project_action', threadId: 'a', clientRef: 'k1', result: { commit: 'abc' } });
  assert.deepEqual(s.changes.note, { action: 'commit', result: { commit: 'abc' } });
  assert.equal(s.changes.pending, null);
  // A refresh keeps what was shown until the new changes come.
  s = reduce(s, { type: 'changes_asked', threadId: 'a', clientRef: 'c2' });
  assert.equal(s.changes.data, frame);
  s = reduce(s, { type: 'project_asked', threadId: 'a', action: 'merge', clientRef: 'm1' });
  assert.equal(s.changes.note, null, 'a new action clears the last one\'s words');
  const before = s;
  s = reduce(s, { type: 'project_refused', clientRef: 'm1', code: 'conflict', message: 'would conflict in README.md' });
  assert.deepEqual(s.changes.note, { action: 'merge', error: { code: 'conflict', message: 'would conflict in README.md' } });
  assert.equal(before.changes.pending.action, 'merge', 'the state before is untouched');
  s = reduce(s, { type: 'project_refused', clientRef: 'c2', code: 'bad_request', message: 'worktree gone' });
  assert.equal(s.changes.note.action, 'changes');
  assert.equal(reduce(s, { type: 'project_refused', clientRef: 'nobody', code: 'x' }), s);
  assert.equal(changesAwait(s, 'nobody'), false);
  // Asked for another thread: what was shown of the first goes.
  const other = reduce(s, { type: 'changes_asked', threadId: 'b', clientRef: 'c3' });
  assert.deepEqual(other.changes, { threadId: 'b', data: null, asked: 'c3', pending: null, note: null });
  assert.equal(reduce(s, { type: 'changes_closed' }).changes, null);
  assert.equal(changesAwait(initialState(), 'c1'), false);
});

test('the socket going down ends the panel\'s wait, saying so', () => {
  let s = reduce(withProjects(), { type: 'changes_asked', threadId: 'a', clientRef: 'c1' });
  s = reduce(s, { type: 'project_asked', threadId: 'a', action: 'merge', clientRef: 'm1' });
  s = reduce(s, { type: 'changes_lost', message: 'the connection dropped' });
  assert.deepEqual(s.changes.note, { action: 'merge', error: { code: 'unavailable', message: 'the connection dropped' } });
  assert.equal(s.changes.asked, null);
  assert.equal(s.changes.pending, null);
  assert.equal(reduce(s, { type: 'changes_lost', message: 'again' }), s, 'nothing waited');
  const onlyAsked = reduce(reduce(withProjects(), { type: 'changes_asked', threadId: 'a', clientRef: 'c2' }),
    { type: 'changes_lost', message: 'dropped' });
  assert.equal(onlyAsked.changes.note.action, 'changes');
  assert.equal(reduce(initialState(), { type: 'changes_lost', message: 'x' }).changes, null);
});

test('the sessions list: a first page, the next one after it, and an answer to a list given up ignored', () => {
  let s = reduce(initialState(), { type: 'sessions_asked', agent: 'lister', project: 'app', clientRef: 's1' });
  assert.deepEqual(s.sessions, { agent: 'lister', project: 'app', asked: 's1', more: false, list: [], supported: null,
    nextCursor: null, error: null });
  assert.equal(sessionsAwait(s, 's1'), true);
  const first = [{ sessionId: 'a', title: 'A', updatedAt: null }, { sessionId: 'b', title: null, updatedAt: null }];
  assert.equal(reduce(s, { type: 'sessions', frame: { clientRef: 'old', supported: true, sessions: first } }), s);
  s = reduce(s, { type: 'sessions', frame: { clientRef: 's1', supported: true, sessions: first, nextCursor: 'c2' } });
  assert.deepEqual(s.sessions.list.map((x) => x.sessionId), ['a', 'b']);
  assert.equal(s.sessions.nextCursor, 'c2');
  assert.equal(s.sessions.asked, null);
  assert.equal(sessionsAwait(s, 's1'), false);
  const before = s;
  s = reduce(s, { type: 'sessions_asked', agent: 'lister', project: 'app', clientRef: 's2', more: true });
  assert.equal(s.sessions.list, before.sessions.list, 'the list stays while the next page comes');
  s = reduce(s, { type: 'sessions', frame: { clientRef: 's2', supported: true,
    sessions: [{ sessionId: 'b' }, { sessionId: 'c' }, { title: 'no id' }], nextCursor: null } });
  assert.deepEqual(s.sessions.list.map((x) => x.sessionId), ['a', 'b', 'c'], 'added below, each once');
  assert.equal(s.sessions.nextCursor, null);
  assert.deepEqual(before.sessions.list.map((x) => x.sessionId), ['a', 'b'], 'the state before is untouched');
  // Another agent's list starts over, even asked as "more".
  const other = reduce(s, { type: 'sessions_asked', agent: 'demo', project: 'app', clientRef: 's3', more: true });
  assert.deepEqual(other.sessions.list, []);
  assert.equal(reduce(s, { type: 'sessions_closed' }).sessions, null);
  assert.equal(reduce(initialState(), { type: 'sessions_closed' }).sessions, null);
});

test('an agent that lists no sessions, a refusal and a dropped socket are kept in words', () => {
  let s = reduce(initialState(), { type: 'sessions_asked', agent: 'demo', project: 'app', clientRef: 's1' });
  const unsupported = reduce(s, { type: 'sessions', frame: { clientRef: 's1', supported: false, sessions: [], nextCursor: 'x' } });
  assert.equal(unsupported.sessions.supported, false);
  assert.equal(unsupported.sessions.nextCursor, null);
  assert.equal(reduce(s, { type: 'sessions_refused', clientRef: 'other', code: 'x' }), s);
  const refused = reduce(s, { type: 'sessions_refused', clientRef: 's1', code: 'unavailable', message: 'no agent' });
  assert.deepEqual(refused.sessions.error, { code: 'unavailable', message: 'no agent' });
  assert.equal(refused.sessions.asked, null);
  const lost = reduce(s, { type: 'sessions_lost', message: 'dropped' });
  assert.deepEqual(lost.sessions.error, { code: 'unavailable', message: 'dropped' });
  assert.equal(reduce(lost, { type: 'sessions_lost', message: 'again' }), lost, 'nothing waited');
  assert.equal(reduce(initialState(), { type: 'sessions_lost', message: 'x' }).sessions, null);
  // Asking again clears the words of the last refusal.
  s = reduce(refused, { type: 'sessions_asked', agent: 'demo', project: 'app', clientRef: 's2' });
  assert.equal(s.sessions.error, null);
});
