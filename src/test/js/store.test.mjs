// The page's reducer and the selectors views read: node --test src/test/js
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  initialState, reduce, createStore, newestListed, totalPending, listChanged, threadRows,
} from '../../main/webroot/js/store.js';

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
