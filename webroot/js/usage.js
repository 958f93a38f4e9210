// What agents said they cost, in words and sums for the Usage view: the gateway's rows (one per local
// day, agent and currency) grouped per day, with a total per day and per agent over the whole span.
// Amounts of different currencies are never added together. Pure functions, no DOM (Node's tests
// import this module).
import { agentName } from './format.js';

// 1.2 -> "1.20"; 0.0042 -> "0.0042" (a cent would read as nothing); 0 -> "0.00".
export function amountText(amount) {
  const n = Number(amount);
  if (!Number.isFinite(n)) return '';
  return n.toFixed(n !== 0 && Math.abs(n) < 0.01 ? 4 : 2);
}

// "1.20 USD".
export const money = (amount, currency) => amountText(amount) + ' ' + (currency || '');

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

// The local day of a moment, as the gateway names days: "2026-12-02".
export function dayOf(ms) {
  const d = new Date(ms);
  const two = (n) => String(n).padStart(2, '0');
  return d.getFullYear() + '-' + two(d.getMonth() + 1) + '-' + two(d.getDate());
}

// A day as a person reads it: "Today", "Yesterday", "Mon 30 Nov", "Wed 31 Dec 2025" (another year).
export function dayLabel(day, now) {
  const m = DAY.exec(day || '');
  if (!m) return String(day || '');
  if (day === dayOf(now)) return 'Today';
  const y = new Date(now);
  if (day === dayOf(new Date(y.getFullYear(), y.getMonth(), y.getDate() - 1).getTime())) return 'Yesterday';
  const d = new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return WEEKDAYS[d.getDay()] + ' ' + d.getDate() + ' ' + MONTHS[d.getMonth()]
    + (d.getFullYear() !== new Date(now).getFullYear() ? ' ' + d.getFullYear() : '');
}

const valid = (r) => r && typeof r === 'object' && DAY.test(r.day || '') && typeof r.agentId === 'string'
  && typeof r.currency === 'string' && r.currency !== '' && Number.isFinite(Number(r.amount));

// Sums per currency, in the order currencies first appear: [{currency, amount, text}].
function byCurrency(rows) {
  const sums = new Map();
  for (const r of rows) sums.set(r.currency, (sums.get(r.currency) || 0) + r.amount);
  return [...sums].map(([currency, amount]) => ({ currency, amount, text: money(amount, currency) }));
}

const byName = (a, b) => a.name.localeCompare(b.name) || a.agentId.localeCompare(b.agentId)
  || a.currency.localeCompare(b.currency);

// The view's model from the usage frame's `days` and the welcome's agents ([{id, name}]):
// {empty, totals: [{agentId, name, currency, amount, text}], days: [{day, label, rows, totals}]},
// days newest first, each day's rows (agentId, name, currency, amount, text) by agent name, its totals
// one per currency; the totals at the top are the whole span's, per agent and currency.
export function usageSummary(days, agents, now) {
  const rows = (Array.isArray(days) ? days : []).filter(valid).map((r) => ({
    day: r.day, agentId: r.agentId, name: agentName(agents, r.agentId) || r.agentId, currency: r.currency,
    amount: Number(r.amount),
  }));
  const perDay = new Map();
  const perAgent = new Map();
  for (const r of rows) {
    const day = perDay.get(r.day) || new Map();
    perDay.set(r.day, day);
    const key = r.agentId + '\u0000' + r.currency;
    const inDay = day.get(key);
    day.set(key, inDay ? { ...inDay, amount: inDay.amount + r.amount } : { ...r });
    const all = perAgent.get(key);
    perAgent.set(key, all ? { ...all, amount: all.amount + r.amount } : { ...r });
  }
  const shown = (r) => ({ agentId: r.agentId, name: r.name, currency: r.currency, amount: r.amount,
    text: money(r.amount, r.currency) });
  const dayList = [...perDay.keys()].sort().reverse().map((day) => {
    const dayRows = [...perDay.get(day).values()].map(shown).sort(byName);
    return { day, label: dayLabel(day, now), rows: dayRows, totals: byCurrency(dayRows) };
  });
  return { empty: dayList.length === 0, totals: [...perAgent.values()].map(shown).sort(byName), days: dayList };
}

// What the view says when no agent reported a cost in the span.
export const NOTHING_REPORTED = 'No cost reported in the last 30 days. Agents that report what they cost '
  + '(ACP usage_update) will show here.';
