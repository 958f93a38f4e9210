// Web Push decisions: node --test src/test/js
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pushProblem, permissionProblem, keyBytes, sameKey, readTarget, within } from '../../../webroot/js/pushcheck.js';

const able = { secure: true, serviceWorker: true, pushManager: true, notification: true, permission: 'default' };

test('push is possible only in a secure context with the APIs, and says why not', () => {
  assert.equal(pushProblem(able), null);
  assert.equal(pushProblem({ ...able, permission: 'granted' }), null);
  const insecure = pushProblem({ ...able, secure: false, serviceWorker: false, pushManager: false });
  assert.match(insecure, /^Push needs HTTPS\. http:\/\/localhost works; a LAN address like http:\/\/192\.168\.x\.y needs TLS/);
  assert.match(insecure, /reverse proxy with a certificate\) or a tunnel/);
  assert.match(pushProblem({ ...able, pushManager: false }), /cannot receive Web Push here.*Home Screen/);
  assert.match(pushProblem({ ...able, serviceWorker: false }), /no service worker or push support/);
  assert.equal(pushProblem({ ...able, permission: 'denied' }),
    'Notifications are blocked for this site in the browser settings.');
});

test('the answer to the permission question', () => {
  assert.equal(permissionProblem('granted'), null);
  assert.match(permissionProblem('denied'), /blocked for this site in the browser settings/);
  assert.match(permissionProblem('default'), /not allowed/);
});

test('the gateway key is base64url without padding; a subscription is for that key or not', () => {
  const raw = Uint8Array.from({ length: 65 }, (_, i) => (i * 37 + 4) & 255);
  raw[0] = 4; // an uncompressed P-256 point
  const b64url = Buffer.from(raw).toString('base64url');
  assert.ok(!b64url.includes('=') && !b64url.includes('+'));
  const bytes = keyBytes(b64url);
  assert.deepEqual([...bytes], [...raw]);
  assert.ok(sameKey(raw.buffer, bytes));
  assert.ok(!sameKey(new Uint8Array(65).buffer, bytes));
  assert.ok(!sameKey(null, bytes));
});

test('a notification link names a thread and a card', () => {
  assert.deepEqual(readTarget('#thread=t-1&request=r-2'), { threadId: 't-1', requestId: 'r-2' });
  assert.deepEqual(readTarget('/#thread=t-1&request=r-2'), { threadId: 't-1', requestId: 'r-2' });
  assert.deepEqual(readTarget('https://x.example/#thread=a%20b'), { threadId: 'a b', requestId: null });
  assert.equal(readTarget('#request=r'), null);
  assert.equal(readTarget(''), null);
  assert.equal(readTarget(undefined), null);
});

test('a subscription that never settles is given up, in words', async () => {
  assert.equal(await within(Promise.resolve('sub'), 50, 'the push service'), 'sub');
  await assert.rejects(within(new Promise(() => {}), 20, 'the push service'),
    { message: 'the push service did not answer within 0 s' });
  await assert.rejects(within(Promise.reject(new Error('AbortError: no key')), 1000, 'x'), { message: 'AbortError: no key' });
});
