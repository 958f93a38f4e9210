// A card's deadline, reminders and expiry in words: node --test src/test/js
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  countdownText, clockTime, deadlineLine, deadlineNear, waitedText, attentionText, expiredText, expiryWarning,
  isFresh, attentionSteps,
} from '../../../webroot/js/countdown.js';

const at = (...parts) => new Date(...parts).getTime(); // the local clock, whatever TZ the run has

test('the countdown is what a clock shows, rounded up, until time is up', () => {
  const now = at(2026, 2, 12, 14, 22, 0);
  assert.equal(countdownText(now + 581_000, now), '9:41 left');
  assert.equal(countdownText(now + 580_200, now), '9:41 left', 'a part of a second left is still a second');
  assert.equal(countdownText(now + 59_000, now), '0:59 left');
  assert.equal(countdownText(now + 400, now), '0:01 left', 'never 0:00 while time remains');
  assert.equal(countdownText(now + 3_723_000, now), '1:02:03 left');
  assert.equal(countdownText(now + (2 * 86400 + 3 * 3600 + 5) * 1000, now), '2 d 3 h left');
  assert.equal(countdownText(now, now), 'time is up');
  assert.equal(countdownText(now - 5000, now), 'time is up');
  assert.equal(countdownText(NaN, now), 'time is up');
});

test('a deadline is a local time, with the day when it is not today', () => {
  const now = at(2026, 2, 12, 14, 22); // Thursday 12 March 2026
  assert.equal(clockTime(at(2026, 2, 12, 14, 32), now), '14:32');
  assert.equal(clockTime(at(2026, 2, 12, 9, 5), now), '09:05');
  assert.equal(clockTime(at(2026, 2, 13, 0, 10), now), 'Fri 00:10');
  assert.equal(clockTime(at(2026, 2, 30, 8, 0), now), '30 Mar 08:00');
});

test('the deadline line says when and how long', () => {
  const now = at(2026, 2, 12, 14, 22, 19);
  const deadline = new Date(at(2026, 2, 12, 14, 32, 0)).toISOString();
  assert.equal(deadlineLine(deadline, now), 'expires 14:32 \u00b7 9:41 left');
  assert.equal(deadlineLine(at(2026, 2, 12, 14, 32, 0), now), 'expires 14:32 \u00b7 9:41 left', 'epoch ms too');
  assert.equal(deadlineLine(deadline, at(2026, 2, 12, 14, 40)), 'expires 14:32 \u00b7 time is up');
  assert.equal(deadlineLine('not a time', now), null);
  assert.equal(deadlineLine(undefined, now), null);
  assert.ok(deadlineNear(now + 60_000, now));
  assert.ok(!deadlineNear(now + 61_000, now));
});

test('a reminder says how long the question has waited', () => {
  assert.equal(waitedText(40_000), '40 s');
  assert.equal(waitedText(300_000), '5 min');
  assert.equal(waitedText(3_900_000), '1 h 5 min');
  assert.equal(waitedText(7_200_000), '2 h');
  assert.equal(waitedText(97_200_000), '1 d 3 h');
  assert.equal(waitedText(undefined), '0 s');
  assert.equal(attentionText('remind', 300_000), 'waiting 5 min \u2014 reminder');
  assert.equal(attentionText('escalate', 1_200_000), 'waiting 20 min \u2014 escalated');
});

test('an expired card says its rule and what became of the request, never a refusal', () => {
  assert.deepEqual(expiredText({ outcome: 'expired', rule: 'deadline 10m of agent claude', onExpiry: 'reject' }),
    { title: 'Expired \u2014 deadline 10m of agent claude', consequence: 'the agent was told no' });
  assert.deepEqual(expiredText({ outcome: 'expired', rule: 'r', onExpiry: 'cancelTurn' }),
    { title: 'Expired \u2014 r', consequence: 'the turn was stopped' });
  assert.deepEqual(expiredText({ outcome: 'expired' }), { title: 'Expired \u2014 its deadline passed', consequence: null });
  assert.equal(expiryWarning('reject'), 'then the agent is told no');
  assert.equal(expiryWarning('cancelTurn'), 'then the turn stops');
  assert.equal(expiryWarning(undefined), null);
});

test('only a recent moment interrupts', () => {
  const now = Date.parse('2026-03-12T14:22:00Z');
  assert.ok(isFresh('2026-03-12T14:21:30Z', now));
  assert.ok(!isFresh('2026-03-12T14:10:00Z', now), 'a replayed reminder');
  assert.ok(!isFresh(undefined, now));
});

test('the audit says what reached people while a request waited, in order, at the times of the ledger', () => {
  const asked = at(2026, 2, 12, 12, 0, 0);
  const events = [
    { at: asked, event: 'registered' },
    { at: asked + 60_000, event: 'pushed', detail: '2 devices' },
    { at: asked + 360_000, event: 'reminded' },
    { at: asked + 600_000, event: 'escalated', detail: 'to chat:boss' },
    { at: asked + 700_000, event: 'rejected', detail: 'not_eligible' },
    { at: asked + 1_200_000, event: 'expired' },
  ];
  assert.equal(attentionSteps(events, asked),
    'pushed 12:01, reminded 12:06, escalated 12:10 (to chat:boss), expired 12:20');
  assert.equal(attentionSteps([{ at: at(2026, 2, 13, 7, 0, 0), event: 'pushed' }], asked), 'pushed Fri 07:00',
    'a step on another day than the question says the day');
  assert.equal(attentionSteps([{ at: asked, event: 'registered' }, { at: asked + 5, event: 'selected' }], asked), '');
  assert.equal(attentionSteps(undefined, asked), '', 'a row without events (an older gateway) shows none');
});
