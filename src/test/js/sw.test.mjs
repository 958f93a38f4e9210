// The service worker, run in a Node context with a fake registration and clients: node --test src/test/js
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import vm from 'node:vm';

const source = readFileSync(new URL('../../../webroot/sw.js', import.meta.url), 'utf8');

// A worker scope of its own: what it showed, closed, focused, posted and opened.
function worker({ windows = [] } = {}) {
  const listeners = {};
  const shown = [];
  const opened = [];
  const registration = {
    async showNotification(title, options) {
      for (let i = shown.length - 1; i >= 0; i--) if (shown[i].options.tag === options.tag) shown.splice(i, 1);
      shown.push({ title, options });
    },
    async getNotifications({ tag } = {}) {
      return shown.filter((n) => tag === undefined || n.options.tag === tag).map((n) => ({
        ...n, close() { shown.splice(shown.indexOf(n), 1); },
      }));
    },
  };
  const clients = {
    async matchAll() { return windows; },
    async openWindow(url) { opened.push(url); },
    async claim() {},
  };
  const self = {
    location: new URL('https://sb.example/sw.js'),
    registration, clients,
    addEventListener(type, f) { listeners[type] = f; },
    skipWaiting() {},
  };
  vm.runInNewContext(source, { self, URL, console });
  async function fire(type, event) {
    let done = Promise.resolve();
    listeners[type]({ ...event, waitUntil(p) { done = p; } });
    await done;
  }
  const push = (message) => fire('push', { data: { json: () => (typeof message === 'string' ? JSON.parse(message) : message) } });
  return { listeners, shown, opened, fire, push };
}

const card = { type: 'card', requestId: 'r-1', threadId: 't-1', title: 'Claude asks', body: 'Run make test',
  url: '/#thread=t-1&request=r-1' };

test('a card push shows a notification tagged with its request; its end closes it', async () => {
  const w = worker();
  await w.push(card);
  assert.equal(w.shown.length, 1);
  assert.equal(w.shown[0].title, 'Claude asks');
  assert.deepEqual(JSON.parse(JSON.stringify(w.shown[0].options)), {
    body: 'Run make test', tag: 'r-1', renotify: false, requireInteraction: true,
    data: { url: '/#thread=t-1&request=r-1', requestId: 'r-1', threadId: 't-1' },
  });
  await w.push({ ...card, type: 'remind', body: 'Still waiting' });
  assert.equal(w.shown.length, 1, 'the reminder replaces the card, by its tag');
  assert.equal(w.shown[0].options.renotify, true);
  await w.push({ ...card, requestId: 'r-2', url: '/#thread=t-1&request=r-2' });
  await w.push({ type: 'end', requestId: 'r-1' });
  assert.deepEqual(w.shown.map((n) => n.options.tag), ['r-2']);
});

test('a push it cannot read still shows something; a link elsewhere becomes the page', async () => {
  const w = worker();
  await w.fire('push', { data: { json() { throw new SyntaxError('not JSON'); } } });
  assert.equal(w.shown[0].title, 'Switchboard');
  await w.push({ ...card, url: 'https://elsewhere.example/#thread=t-1' });
  assert.equal(w.shown[1].options.data.url, '/');
});

test('a tap brings the open page forward and tells it the card; with none, opens one', async () => {
  const posted = [];
  let focused = 0;
  const page = { url: 'https://sb.example/', focused: false, visibilityState: 'hidden',
    postMessage(m) { posted.push(m); }, async focus() { focused++; } };
  const other = { url: 'https://other.example/', focused: true, visibilityState: 'visible',
    postMessage() { throw new Error('not this origin'); }, async focus() {} };
  let closed = false;
  const w = worker({ windows: [other, page] });
  await w.fire('notificationclick', { notification: { data: { url: '/#thread=t-1&request=r-1' }, close() { closed = true; } } });
  assert.ok(closed);
  assert.deepEqual(JSON.parse(JSON.stringify(posted)), [{ type: 'open', url: '/#thread=t-1&request=r-1' }]);
  assert.equal(focused, 1);
  assert.equal(w.opened.length, 0);

  const none = worker();
  await none.fire('notificationclick', { notification: { data: { url: '/#thread=t-2&request=r-9' }, close() {} } });
  assert.deepEqual([...none.opened], ['/#thread=t-2&request=r-9']);
});
