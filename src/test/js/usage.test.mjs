// What agents said they cost, grouped and summed for the Usage view: node --test src/test/js
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { amountText, dayLabel, dayOf, money, usageSummary } from '../../../webroot/js/usage.js';

const at = (...parts) => new Date(...parts).getTime(); // the local clock, whatever TZ the run has
const now = at(2026, 11, 2, 14, 22); // Wednesday 2 December 2026
const agents = [{ id: 'claude', name: 'Claude Code' }, { id: 'demo', name: 'Demo agent' }];

test('amounts have 2 decimals, 4 under a cent, and 0 is 0.00', () => {
  assert.equal(amountText(1.2), '1.20');
  assert.equal(amountText(0.5 + 0.5 + 0.2), '1.20'); // a double's sum reads as money
  assert.equal(amountText(12.345), '12.35');
  assert.equal(amountText(0.0042), '0.0042');
  assert.equal(amountText(0.00001), '0.0000');
  assert.equal(amountText(0.01), '0.01');
  assert.equal(amountText(0), '0.00');
  assert.equal(amountText(-0.005), '-0.0050');
  assert.equal(amountText('x'), '');
  assert.equal(money(1.2, 'USD'), '1.20 USD');
});

test('a day reads as today, yesterday, a weekday and date, with the year only when it is another', () => {
  assert.equal(dayOf(now), '2026-12-02');
  assert.equal(dayLabel('2026-12-02', now), 'Today');
  assert.equal(dayLabel('2026-12-01', now), 'Yesterday');
  assert.equal(dayLabel('2026-11-30', now), 'Mon 30 Nov');
  assert.equal(dayLabel('2025-12-31', at(2026, 0, 5)), 'Wed 31 Dec 2025');
  assert.equal(dayLabel('2026-01-01', at(2026, 0, 2, 0, 5)), 'Yesterday', 'across a year');
  assert.equal(dayLabel('not a day', now), 'not a day');
});

test('nothing reported is empty', () => {
  assert.deepEqual(usageSummary([], agents, now), { empty: true, totals: [], days: [] });
  assert.equal(usageSummary(undefined, agents, now).empty, true);
  assert.equal(usageSummary([{ day: 'x', agentId: 'a', currency: 'USD', amount: 1 }, null], agents, now).empty, true,
    'rows the page cannot read are left out');
});

test('each day lists its agents by name with a total; the top sums the span per agent', () => {
  const s = usageSummary([
    { day: '2026-12-02', agentId: 'demo', currency: 'USD', amount: 1.2 },
    { day: '2026-12-02', agentId: 'claude', currency: 'USD', amount: 0.3 },
    { day: '2026-11-30', agentId: 'claude', currency: 'USD', amount: 2 },
  ], agents, now);
  assert.equal(s.empty, false);
  assert.deepEqual(s.days.map((d) => [d.day, d.label]), [['2026-12-02', 'Today'], ['2026-11-30', 'Mon 30 Nov']]);
  assert.deepEqual(s.days[0].rows.map((r) => [r.name, r.text]), [['Claude Code', '0.30 USD'], ['Demo agent', '1.20 USD']]);
  assert.deepEqual(s.days[0].totals.map((t) => t.text), ['1.50 USD']);
  assert.deepEqual(s.days[1].totals.map((t) => t.text), ['2.00 USD']);
  assert.deepEqual(s.totals.map((t) => [t.agentId, t.name, t.text]),
    [['claude', 'Claude Code', '2.30 USD'], ['demo', 'Demo agent', '1.20 USD']]);
});

test('days come newest first whatever order the rows came in', () => {
  const s = usageSummary([
    { day: '2026-11-29', agentId: 'demo', currency: 'USD', amount: 1 },
    { day: '2026-12-01', agentId: 'demo', currency: 'USD', amount: 1 },
    { day: '2026-11-30', agentId: 'demo', currency: 'USD', amount: 1 },
  ], agents, now);
  assert.deepEqual(s.days.map((d) => d.day), ['2026-12-01', '2026-11-30', '2026-11-29']);
  assert.deepEqual(s.totals.map((t) => t.text), ['3.00 USD']);
});

test('different currencies are never added together', () => {
  const s = usageSummary([
    { day: '2026-12-02', agentId: 'demo', currency: 'USD', amount: 1 },
    { day: '2026-12-02', agentId: 'demo', currency: 'EUR', amount: 2 },
    { day: '2026-12-02', agentId: 'claude', currency: 'USD', amount: 0.0042 },
    { day: '2026-12-01', agentId: 'demo', currency: 'EUR', amount: 0.5 },
  ], agents, now);
  assert.deepEqual(s.days[0].rows.map((r) => [r.name, r.text]),
    [['Claude Code', '0.0042 USD'], ['Demo agent', '2.00 EUR'], ['Demo agent', '1.00 USD']]);
  assert.deepEqual(s.days[0].totals.map((t) => t.text), ['1.00 USD', '2.00 EUR'], 'one total per currency');
  assert.deepEqual(s.days[1].totals.map((t) => t.text), ['0.50 EUR']);
  assert.deepEqual(s.totals.map((t) => [t.name, t.text]),
    [['Claude Code', '0.0042 USD'], ['Demo agent', '2.50 EUR'], ['Demo agent', '1.00 USD']]);
});

test('an agent the welcome does not name is shown by its id', () => {
  const s = usageSummary([{ day: '2026-12-02', agentId: 'gone', currency: 'USD', amount: 0.25 }], agents, now);
  assert.deepEqual(s.days[0].rows.map((r) => [r.agentId, r.name, r.text]), [['gone', 'gone', '0.25 USD']]);
  assert.equal(usageSummary([{ day: '2026-12-02', agentId: 'gone', currency: 'USD', amount: 1 }], undefined, now)
    .totals[0].name, 'gone');
});
