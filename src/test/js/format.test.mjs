// The page's words and shapes: node --test src/test/js
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  reasonText, commandOf, shortPath, blockText, stopText, usageText, diffRows, keysHint, answeredBy, agentLabel,
  commandsMatching, titleWithCount, exitText, isImage, isPreview, base64Bytes, composerHint,
} from '../../../webroot/js/format.js';

test('a reason is said in the gateway\'s words; one it does not know is read as words', () => {
  const words = { 'session-cancelled': 'the turn was stopped' };
  assert.equal(reasonText(words, 'session-cancelled'), 'the turn was stopped');
  assert.equal(reasonText(words, 'node-on-fire'), 'node on fire');
  assert.equal(reasonText(words, undefined), 'no reason given');
  assert.equal(reasonText({}, 'constructor'), 'constructor', 'not an Object property');
});

test('a command is read from the shapes agents give it', () => {
  assert.deepEqual(commandOf({ command: ['ls', '-la'], cwd: '/w' }), { command: 'ls -la', cwd: '/w' });
  assert.deepEqual(commandOf({ command: 'git', args: ['status'] }), { command: 'git status', cwd: null });
  assert.deepEqual(commandOf({ cmd: 'make', workdir: '/x' }), { command: 'make', cwd: '/x' });
  assert.equal(commandOf({ path: 'a.txt' }), null);
  assert.equal(commandOf('rm -rf /'), null);
});

test('workspace paths are shown from the workspace on', () => {
  assert.equal(shortPath('/data/workspaces/t-1/src/a.js'), 'src/a.js');
  assert.equal(shortPath('/etc/hosts'), '/etc/hosts');
});

test('content blocks become Markdown', () => {
  assert.equal(blockText({ type: 'text', text: 'hi' }), 'hi');
  assert.equal(blockText({ type: 'resource_link', uri: 'file:///a', name: 'a' }), '[a](file:///a)');
  assert.equal(blockText({ type: 'image', data: 'x' }), '');
  assert.equal(blockText(null), '');
});

test('turns, usage, keys, answers and exits in words', () => {
  assert.equal(stopText('cancelled'), 'Stopped.');
  assert.equal(stopText('odd'), 'Turn ended: odd');
  assert.equal(usageText({ used: 12345, size: 200000, cost: { amount: 0.5, currency: 'USD' } }), '12k / 200k tokens · 0.50 USD');
  assert.equal(usageText({ used: 1, size: 0 }), null);
  assert.equal(usageText({ used: 1000, size: 2000, cost: { amount: 1, currency: 'usd' } }), '1k / 2k tokens · 1.00 USD');
  assert.equal(keysHint(3), 'Keys: Alt+1…Alt+3, in this order');
  assert.equal(keysHint(1), 'Keys: Alt+1, in this order');
  assert.equal(keysHint(0), '');
  assert.equal(answeredBy({ user: 'ann', surface: 'telegram' }), 'ann on telegram');
  assert.equal(answeredBy(undefined), 'someone');
  assert.equal(exitText({ exitCode: 2 }), 'Exit code 2');
  assert.equal(exitText({ signal: 'SIGKILL' }), 'Stopped by SIGKILL');
  assert.equal(titleWithCount(2), '(2) Switchboard');
  assert.equal(titleWithCount(0), 'Switchboard');
});

test('an agent is named, with its node in a cluster', () => {
  const agents = [{ id: 'demo', name: 'Demo agent' }];
  assert.equal(agentLabel(agents, { agent: 'demo' }), 'Demo agent');
  assert.equal(agentLabel(agents, { agent: 'demo', node: 'build-1' }), 'Demo agent \u00b7 build-1');
  assert.equal(agentLabel(agents, { agent: 'gone' }), 'gone');
});

test('slash commands complete a "/" and a word only', () => {
  const commands = [{ name: 'plan' }, { name: 'push' }, { name: 'review' }];
  assert.deepEqual(commandsMatching('/p', commands).map((c) => c.name), ['plan', 'push']);
  assert.deepEqual(commandsMatching('/p x', commands), []);
  assert.deepEqual(commandsMatching('p', commands), []);
});

test('a diff marks the lines added and removed, and a new file as all added', () => {
  assert.deepEqual(diffRows('a\nb\nc\n', 'a\nB\nc\n'), [
    { kind: null, text: '  a' }, { kind: 'add', text: '+ B' }, { kind: 'del', text: '- b' }, { kind: null, text: '  c' }]);
  assert.deepEqual(diffRows(null, 'x\ny'), [{ kind: 'add', text: '+ x' }, { kind: 'add', text: '+ y' }]);
  assert.deepEqual(diffRows('same', 'same'), [{ kind: null, text: '  same' }]);
});

test('only images and previews the page expects are drawn', () => {
  assert.equal(isImage('image/png', 'iVBORw0KGgo='), true);
  assert.equal(isImage('image/svg+xml', 'PHN2Zz4='), false);
  assert.equal(isImage('image/png', 'not base64!'), false);
  assert.equal(isPreview('data:image/jpeg;base64,AAAA'), true);
  assert.equal(isPreview('javascript:alert(1)'), false);
  assert.equal(base64Bytes('data:image/png;base64,AAAA'), 3);
});

test('the composer says what Enter does where it is true: on a touch keyboard it breaks the line', () => {
  assert.match(composerHint(false), /Enter sends/);
  assert.doesNotMatch(composerHint(true), /Enter sends/);
  assert.match(composerHint(true), /tap Send/);
});
