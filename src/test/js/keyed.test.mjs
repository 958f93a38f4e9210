// The thread list's keyed rendering, on a stand-in for a DOM list: node --test src/test/js
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keyedList } from '../../../webroot/js/keyed.js';

// Just what keyedList uses of an element: its children, insertBefore (which moves a child already
// in the list) and removeChild; it counts the moves.
function fakeList() {
  const list = {
    children: [],
    moves: 0,
    insertBefore(node, ref) {
      const at = this.children.indexOf(node);
      if (at >= 0) this.children.splice(at, 1);
      const to = ref ? this.children.indexOf(ref) : this.children.length;
      this.children.splice(to, 0, node);
      this.moves++;
    },
    removeChild(node) { this.children.splice(this.children.indexOf(node), 1); },
  };
  return list;
}

function mounted() {
  const list = fakeList();
  const made = [];
  const render = keyedList(list, (item) => { const row = { key: item.key }; made.push(row); return row; },
    (row, item) => { row.title = item.title; });
  return { list, made, render };
}

const keys = (list) => list.children.map((r) => r.key);

test('rows are made once per key and updated in place', () => {
  const { list, made, render } = mounted();
  render([{ key: 'a', title: 'A' }, { key: 'b', title: 'B' }]);
  const [a, b] = list.children;
  render([{ key: 'a', title: 'A2' }, { key: 'b', title: 'B' }]);
  assert.equal(made.length, 2);
  assert.equal(list.children[0], a);
  assert.equal(list.children[1], b);
  assert.equal(a.title, 'A2');
});

test('an unchanged list is not touched', () => {
  const { list, render } = mounted();
  render([{ key: 'a' }, { key: 'b' }, { key: 'c' }]);
  const before = list.moves;
  render([{ key: 'a' }, { key: 'b' }, { key: 'c' }]);
  assert.equal(list.moves, before);
});

test('a new thread on top moves nothing else; a gone one is removed', () => {
  const { list, render } = mounted();
  render([{ key: 'b' }, { key: 'a' }]);
  const moves = list.moves;
  render([{ key: 'c' }, { key: 'b' }, { key: 'a' }]);
  assert.deepEqual(keys(list), ['c', 'b', 'a']);
  assert.equal(list.moves - moves, 1, 'only the new row is inserted');
  render([{ key: 'c' }, { key: 'a' }]);
  assert.deepEqual(keys(list), ['c', 'a']);
});

test('rows follow a new order, keeping their identity', () => {
  const { list, made, render } = mounted();
  render([{ key: 'a' }, { key: 'b' }, { key: 'c' }]);
  render([{ key: 'c' }, { key: 'a' }, { key: 'b' }]);
  assert.deepEqual(keys(list), ['c', 'a', 'b']);
  assert.equal(made.length, 3);
  render([]);
  assert.deepEqual(keys(list), []);
  render([{ key: 'a' }]);
  assert.equal(made.length, 4, 'a row removed is made again when its thread comes back');
});
