// Agents' questions (ACP elicitation): fields from a schema, values checked and typed, the answer in
// words. node --test src/test/js
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  answerSummary, checkAnswer, fieldsOf, isQuestion, isoWithOffset, linkOf, localInputOf, questionButtons,
  questionTitle, refusedField, valueText,
} from '../../../webroot/js/question.js';

// The bad agent's elicit-form schema (src/test/badpeers/bad-agent.js), and more.
const DEPLOY = {
  type: 'object', title: 'Deploy settings', properties: {
    name: { type: 'string', title: 'Release name', minLength: 2, maxLength: 40 },
    replicas: { type: 'integer', title: 'Replicas', minimum: 1, maximum: 5, default: 2 },
    region: { type: 'string', title: 'Region', oneOf: [{ const: 'eu', title: 'Europe' }, { const: 'us', title: 'America' }] },
    notify: { type: 'boolean', title: 'Notify the team' },
    token: { type: 'string', title: 'Deploy token', writeOnly: true },
  },
  required: ['name', 'region'],
};
const form = (requestedSchema) => ({ mode: 'form', message: 'How should I deploy?', requestedSchema });
const byName = (fields) => Object.fromEntries(fields.map((f) => [f.name, f]));

test('a question is a card whose toolCall has kind "question" and a question', () => {
  assert.equal(isQuestion({ kind: 'question', question: form(DEPLOY) }), true);
  assert.equal(isQuestion({ kind: 'execute', question: form(DEPLOY) }), false);
  assert.equal(isQuestion({ kind: 'question' }), false);
  assert.equal(isQuestion(undefined), false);
});

test('each property is one field: label, help, required, its kind and constraints, its first value', () => {
  const fields = fieldsOf(DEPLOY);
  assert.deepEqual(fields.map((f) => f.name), ['name', 'replicas', 'region', 'notify', 'token'], 'the schema order');
  const f = byName(fields);
  assert.deepEqual(f.name, { name: 'name', label: 'Release name', help: '', required: true, kind: 'text',
    inputType: 'text', secret: false, format: null, minLength: 2, maxLength: 40, pattern: null, initial: '' });
  assert.deepEqual(f.replicas, { name: 'replicas', label: 'Replicas', help: '', required: false, kind: 'number',
    integer: true, minimum: 1, maximum: 5, initial: '2' });
  assert.deepEqual(f.region.choices, [{ value: 'eu', label: 'Europe' }, { value: 'us', label: 'America' }]);
  assert.equal(f.region.kind, 'choice');
  assert.equal(f.region.required, true);
  assert.equal(f.notify.kind, 'boolean');
  assert.equal(f.notify.initial, false);
  assert.equal(f.token.secret, true, 'writeOnly is a secret');
  assert.equal(f.token.inputType, 'password');
  assert.equal(f.token.label, 'Deploy token');
});

test('a label is the title or the name; a description is help; formats pick the input', () => {
  const f = byName(fieldsOf({ type: 'object', properties: {
    mail: { type: 'string', format: 'email', description: 'where to write' },
    home: { type: 'string', format: 'uri' },
    day: { type: 'string', format: 'date', default: '2026-12-24' },
    at: { type: 'string', format: 'date-time' },
    pin: { type: 'string', format: 'password', default: 'never shown' },
    code: { type: 'string', pattern: '^[A-Z]{3}$' },
    ratio: { type: 'number', minimum: 0.5 },
    flag: { type: 'boolean', default: true },
    tags: { type: 'array', title: 'Tags', minItems: 1, maxItems: 2, items: { type: 'string', enum: ['a', 'b', 'c'] },
      default: ['c', 'a', 'zzz'] },
    pets: { type: 'array', items: { anyOf: [{ const: 'cat', title: 'Cat' }, { const: 'dog', title: 'Dog' }] } },
    size: { type: 'string', enum: ['s', 'm'], enumNames: ['Small', 'Medium'], default: 'm' },
    nested: { type: 'object', properties: {} },
  } }));
  assert.equal(f.mail.label, 'mail');
  assert.equal(f.mail.help, 'where to write');
  assert.equal(f.mail.inputType, 'email');
  assert.equal(f.home.inputType, 'url');
  assert.equal(f.day.inputType, 'date');
  assert.equal(f.day.initial, '2026-12-24');
  assert.equal(f.at.inputType, 'datetime-local');
  assert.equal(f.pin.inputType, 'password');
  assert.equal(f.pin.secret, true);
  assert.equal(f.pin.initial, '', 'a secret is never pre-filled');
  assert.equal(f.code.pattern, '^[A-Z]{3}$');
  assert.equal(f.ratio.integer, false);
  assert.equal(f.ratio.minimum, 0.5);
  assert.equal(f.ratio.maximum, null);
  assert.equal(f.flag.initial, true);
  assert.equal(f.tags.kind, 'multi');
  assert.deepEqual(f.tags.initial, ['a', 'c'], 'known defaults, in the choices\' order');
  assert.equal(f.tags.minItems, 1);
  assert.equal(f.tags.maxItems, 2);
  assert.deepEqual(f.pets.choices, [{ value: 'cat', label: 'Cat' }, { value: 'dog', label: 'Dog' }]);
  assert.deepEqual(f.size.choices, [{ value: 's', label: 'Small' }, { value: 'm', label: 'Medium' }]);
  assert.equal(f.size.initial, 'm');
  assert.equal(f.nested.kind, 'unsupported');
  assert.deepEqual(fieldsOf(undefined), []);
  assert.deepEqual(fieldsOf({ type: 'object' }), []);
});

test('a valid fill is typed as the schema says; empty optional fields are left out', () => {
  const fields = fieldsOf(DEPLOY);
  const { errors, content } = checkAnswer(fields,
    { name: 'v1.2', replicas: '3', region: 'us', notify: true, token: 's3cret' });
  assert.deepEqual(errors, {});
  assert.deepEqual(content, { name: 'v1.2', replicas: 3, region: 'us', notify: true, token: 's3cret' });
  assert.equal(typeof content.replicas, 'number');
  const sparse = checkAnswer(fields, { name: 'ok', replicas: '', region: 'eu', notify: false, token: '' });
  assert.deepEqual(sparse.errors, {});
  assert.deepEqual(sparse.content, { name: 'ok', region: 'eu', notify: false }, 'a boolean is always true or false');
});

test('each bad field gets its own words, and nothing is sent', () => {
  const fields = fieldsOf(DEPLOY);
  assert.deepEqual(checkAnswer(fields, { name: 'x', replicas: '9', region: '', notify: false, token: '' }).errors, {
    name: 'Needs at least 2 characters', replicas: 'At most 5', region: 'Choose one' });
  assert.deepEqual(checkAnswer(fields, { name: '  ', replicas: '2.5', region: 'mars' }).errors, {
    name: 'Needs an answer', replicas: 'Needs a whole number', region: 'Not one of the choices' });
  assert.deepEqual(checkAnswer(fields, { name: 'x'.repeat(41), replicas: '0', region: 'eu' }).errors, {
    name: 'At most 40 characters', replicas: 'At least 1' });
  assert.deepEqual(checkAnswer(fields, { name: 'ok', replicas: 'NaN', region: 'eu' }).errors, { replicas: 'Needs a number' });
  // Characters, not UTF-16 units: one emoji is one character.
  assert.deepEqual(checkAnswer(fields, { name: '\u{1F680}', region: 'eu' }).errors, { name: 'Needs at least 2 characters' });
  assert.deepEqual(checkAnswer(fields, { name: '\u{1F680}\u{1F680}', region: 'eu' }).errors, {});
});

test('patterns, formats and multi-selects are checked too', () => {
  const fields = fieldsOf({ type: 'object', required: ['code', 'tags'], properties: {
    code: { type: 'string', pattern: '^[A-Z]{3}$' },
    mail: { type: 'string', format: 'email' },
    home: { type: 'string', format: 'uri' },
    day: { type: 'string', format: 'date' },
    tags: { type: 'array', minItems: 2, maxItems: 2, items: { type: 'string', enum: ['a', 'b', 'c'] } },
    more: { type: 'array', items: { type: 'string', enum: ['x', 'y'] } },
    odd: { type: 'string', pattern: '(' },
  } });
  assert.deepEqual(checkAnswer(fields, { code: 'abc', mail: 'me@localhost', home: 'example.com', day: '24.12.2026', tags: ['a'],
    odd: 'anything' }).errors, {
    code: 'Not in the form asked for (^[A-Z]{3}$)', mail: 'Needs an email address',
    home: 'Needs a full address, like https://example.com', day: 'Needs a date', tags: 'Choose at least 2' });
  assert.deepEqual(checkAnswer(fields, { code: 'ABC', tags: [] }).errors, { tags: 'Choose at least one' });
  assert.deepEqual(checkAnswer(fields, { code: 'ABC', tags: ['a', 'b', 'c'] }).errors, { tags: 'Choose at most 2' });
  assert.deepEqual(checkAnswer(fields, { code: 'ABC', tags: ['a', 'q'] }).errors, { tags: 'Not one of the choices' });
  const ok = checkAnswer(fields, { code: 'ABC', mail: 'a@b.example', home: 'https://x.example/p', day: '2026-12-24',
    tags: ['c', 'a'], more: [], odd: 'x' });
  assert.deepEqual(ok.errors, {}, 'a pattern this browser cannot read is left to the gateway');
  assert.deepEqual(ok.content, { code: 'ABC', mail: 'a@b.example', home: 'https://x.example/p', day: '2026-12-24',
    tags: ['a', 'c'], odd: 'x' }, 'the choices\' order; an empty optional multi-select left out');
});

test('a date-time typed on the local clock is sent as an ISO-8601 instant with its offset', () => {
  assert.equal(isoWithOffset('2026-12-02T16:30', 60), '2026-12-02T16:30:00+01:00');
  assert.equal(isoWithOffset('2026-12-02T16:30:15', -330), '2026-12-02T16:30:15-05:30');
  assert.equal(isoWithOffset('2026-12-02T16:30', 0), '2026-12-02T16:30:00+00:00');
  assert.equal(isoWithOffset('2026-02-30T10:00', 0), null, 'no such day');
  assert.equal(isoWithOffset('tomorrow', 0), null);
  // With the machine's own offset it names the same instant the local clock showed.
  const sent = isoWithOffset('2026-07-01T09:05');
  assert.equal(Date.parse(sent), new Date(2026, 6, 1, 9, 5).getTime(), sent);
  assert.equal(localInputOf(sent), '2026-07-01T09:05', 'and shows again as typed');
  assert.equal(localInputOf('not a time'), '');
  const fields = fieldsOf({ type: 'object', properties: { at: { type: 'string', format: 'date-time' } } });
  const { errors, content } = checkAnswer(fields, { at: '2026-07-01T09:05' });
  assert.deepEqual(errors, {});
  assert.equal(Date.parse(content.at), new Date(2026, 6, 1, 9, 5).getTime());
  assert.match(content.at, /[+-]\d{2}:\d{2}$/);
  assert.deepEqual(checkAnswer(fields, { at: '09:05' }).errors, { at: 'Needs a date and a time' });
});

test('the gateway\'s refusal names its field by (name)', () => {
  const fields = fieldsOf(DEPLOY);
  assert.equal(refusedField(fields, '"Release name" (name) needs at least 2 characters'), 'name');
  assert.equal(refusedField(fields, '"Replicas" (replicas) must be at most 5'), 'replicas');
  assert.equal(refusedField(fields, 'the answer is not an object'), null);
  const untitled = fieldsOf({ type: 'object', properties: { colour: { type: 'string', enum: ['red'] } } });
  assert.equal(refusedField(untitled, 'colour is required'), 'colour', 'an untitled field is named bare');
  assert.equal(refusedField(untitled, 'the form has no field "x"'), null);
  assert.equal(refusedField(fields, undefined), null);
});

test('a link is only ever http(s); its host is what it really opens', () => {
  assert.deepEqual(linkOf({ mode: 'url', url: 'https://auth.example.com/device?code=ABCD' }),
    { href: 'https://auth.example.com/device?code=ABCD', host: 'auth.example.com' });
  assert.deepEqual(linkOf({ url: 'http://127.0.0.1:8080/x' }), { href: 'http://127.0.0.1:8080/x', host: '127.0.0.1:8080' });
  assert.equal(linkOf({ url: 'javascript:alert(1)' }), null);
  assert.equal(linkOf({ url: 'data:text/html,hi' }), null);
  assert.equal(linkOf({ url: 'file:///etc/passwd' }), null);
  assert.equal(linkOf({ url: '/relative' }), null);
  assert.equal(linkOf({}), null);
  // A look-alike name in Unicode shows as what it is.
  assert.equal(linkOf({ url: 'https://аpple.com/' }).host, 'xn--pple-43d.com');
  // A user:password@ in front of the host does not pass for the host.
  assert.equal(linkOf({ url: 'https://bank.example@evil.example/' }).host, 'evil.example');
});

test('the buttons: Submit or Open <host>, Decline, Cancel; the chat\'s one-tap options are left out', () => {
  const options = [{ optionId: 'accept', name: 'Submit', kind: 'accept' },
    { optionId: 'accept:red', name: 'red', kind: 'accept' }, { optionId: 'accept:green', name: 'green', kind: 'accept' },
    { optionId: 'decline', name: 'Decline', kind: 'decline' }, { optionId: 'cancel', name: 'Cancel', kind: 'cancel' }];
  assert.deepEqual(questionButtons(options, form(DEPLOY)).map((b) => [b.optionId, b.name, b.role]),
    [['accept', 'Submit', 'accept'], ['decline', 'Decline', 'decline'], ['cancel', 'Cancel', 'cancel']]);
  const url = { mode: 'url', url: 'https://auth.example.com/device?code=ABCD', domain: 'auth.example.com' };
  assert.deepEqual(questionButtons([], url).map((b) => b.name), ['Open auth.example.com', 'Decline', 'Cancel'],
    'without the gateway\'s options too');
  assert.equal(questionButtons([{ optionId: 'accept', name: 'Open auth.example.com', kind: 'accept' }], url)[0].name,
    'Open auth.example.com');
});

test('an answer in words: labels, Yes/No, a choice\'s title, several joined, a secret hidden', () => {
  const outcome = { outcome: 'selected', optionId: 'accept', kind: 'accept', answeredBy: { surface: 'web' },
    answer: { content: { name: 'v1.2', replicas: 3, region: 'us', notify: false }, hidden: ['token'] } };
  assert.deepEqual(answerSummary(form(DEPLOY), outcome), { verdict: 'Answered', rows: [
    { name: 'name', label: 'Release name', value: 'v1.2', hidden: false },
    { name: 'replicas', label: 'Replicas', value: '3', hidden: false },
    { name: 'region', label: 'Region', value: 'America', hidden: false },
    { name: 'notify', label: 'Notify the team', value: 'No', hidden: false },
    { name: 'token', label: 'Deploy token', value: 'hidden', hidden: true },
  ] });
  // A secret the end carries anyway is still not shown; a field not asked about is shown by its name.
  const leaky = { ...outcome, answer: { content: { name: 'v1', region: 'eu', token: 's3cret', extra: ['a', 'b'] } } };
  const rows = answerSummary(form(DEPLOY), leaky).rows;
  assert.deepEqual(rows.find((r) => r.name === 'token'), { name: 'token', label: 'Deploy token', value: 'hidden', hidden: true });
  assert.deepEqual(rows.find((r) => r.name === 'extra'), { name: 'extra', label: 'extra', value: 'a, b', hidden: false });
  assert.ok(!JSON.stringify(answerSummary(form(DEPLOY), leaky)).includes('s3cret'));
  const multi = form({ type: 'object', properties: { pets: { type: 'array', title: 'Pets',
    items: { anyOf: [{ const: 'cat', title: 'Cat' }, { const: 'dog', title: 'Dog' }] } } } });
  assert.deepEqual(answerSummary(multi, { outcome: 'selected', optionId: 'accept', kind: 'accept',
    answer: { content: { pets: ['cat', 'dog'] } } }).rows, [{ name: 'pets', label: 'Pets', value: 'Cat, Dog', hidden: false }]);
});

test('declined, cancelled, opened, a chat\'s one tap, and an end without an answer', () => {
  const choice = form({ type: 'object', properties: { colour: { type: 'string', enum: ['red', 'green'] } },
    required: ['colour'] });
  assert.deepEqual(answerSummary(choice, { outcome: 'selected', optionId: 'decline', kind: 'decline' }),
    { verdict: 'Declined', rows: [] });
  assert.deepEqual(answerSummary(choice, { outcome: 'selected', optionId: 'cancel', kind: 'cancel' }),
    { verdict: 'Cancelled', rows: [] });
  assert.deepEqual(answerSummary(choice, { outcome: 'selected', optionId: 'accept:green', kind: 'accept' }),
    { verdict: 'Answered', rows: [{ name: 'colour', label: 'colour', value: 'green', hidden: false }] });
  const yesNo = form({ type: 'object', properties: { ok: { type: 'boolean', title: 'Go ahead' } }, required: ['ok'] });
  assert.equal(answerSummary(yesNo, { outcome: 'selected', optionId: 'accept:true', kind: 'accept' }).rows[0].value, 'Yes');
  const url = { mode: 'url', message: 'Sign in', url: 'https://auth.example.com/device?code=ABCD', domain: 'auth.example.com' };
  assert.deepEqual(answerSummary(url, { outcome: 'selected', optionId: 'accept', kind: 'accept' }),
    { verdict: 'Opened auth.example.com', rows: [] });
  assert.equal(answerSummary(url, { outcome: 'selected', optionId: 'decline', kind: 'decline' }).verdict, 'Declined');
  assert.equal(answerSummary(url, { outcome: 'cancelled', reason: 'withdrawn' }), null);
  assert.equal(answerSummary(choice, { outcome: 'expired', rule: 'deadline 1m' }), null);
  assert.equal(answerSummary(choice, undefined), null);
});

test('values in words, and a question box\'s heading', () => {
  assert.equal(valueText(null, true), 'Yes');
  assert.equal(valueText(null, 0), '0');
  assert.equal(valueText(null, { a: 1 }), '{"a":1}');
  assert.equal(questionTitle(form(DEPLOY)), 'Deploy settings');
  assert.equal(questionTitle(form({ type: 'object', properties: {} })), 'A question');
  assert.equal(questionTitle({ mode: 'url', url: 'https://x.example' }), 'A link to open');
});
