// A permission card's deadline, reminders and expiry in words: pure functions, no DOM (Node's tests
// import this module). Times are the person's local clock; the countdown is what a clock shows.

const pad = (n) => String(n).padStart(2, '0');
const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

// The time left before the deadline, counted down: "9:41 left", "1:02:03 left", "2 d 3 h left", and
// "time is up" once it passed (rounded up, so "0:00 left" never shows while time remains).
export function countdownText(deadlineMs, nowMs) {
  const left = Math.ceil((deadlineMs - nowMs) / 1000);
  if (!(left > 0)) return 'time is up';
  const d = Math.floor(left / 86400);
  const h = Math.floor(left / 3600) % 24;
  const m = Math.floor(left / 60) % 60;
  const s = left % 60;
  if (d > 0) return d + ' d ' + h + ' h left';
  if (h > 0) return h + ':' + pad(m) + ':' + pad(s) + ' left';
  return m + ':' + pad(s) + ' left';
}

// A moment on the local clock, as near as it is: "14:32" today, "Mon 14:32" within the week ahead
// (or behind), "12 Mar 14:32" further away.
export function clockTime(ms, nowMs) {
  const at = new Date(ms);
  const now = new Date(nowMs);
  const hm = pad(at.getHours()) + ':' + pad(at.getMinutes());
  const day = (x) => new Date(x.getFullYear(), x.getMonth(), x.getDate()).getTime();
  const days = Math.round((day(at) - day(now)) / 86400000);
  if (days === 0) return hm;
  if (Math.abs(days) < 7) return DAYS[at.getDay()] + ' ' + hm;
  return at.getDate() + ' ' + MONTHS[at.getMonth()] + ' ' + hm;
}

// What happens when nobody answers in time, from the card's onExpiry.
export function expiryConsequence(onExpiry) {
  if (onExpiry === 'cancelTurn') return 'the turn was stopped';
  if (onExpiry === 'reject') return 'the agent was told no';
  return null;
}

// The same, said ahead of time on a card that still waits.
export function expiryWarning(onExpiry) {
  if (onExpiry === 'cancelTurn') return 'then the turn stops';
  if (onExpiry === 'reject') return 'then the agent is told no';
  return null;
}

// The card's deadline line: "expires 14:32 · 9:41 left" (null without a readable deadline).
export function deadlineLine(deadline, nowMs) {
  const ms = typeof deadline === 'number' ? deadline : Date.parse(deadline ?? '');
  if (!Number.isFinite(ms)) return null;
  return 'expires ' + clockTime(ms, nowMs) + ' \u00b7 ' + countdownText(ms, nowMs);
}

// Whether the deadline is near enough to say so loudly (the last minute, or past).
export const deadlineNear = (deadlineMs, nowMs) => deadlineMs - nowMs <= 60000;

// How long a question has waited: "40 s", "5 min", "1 h 5 min", "2 d 3 h".
export function waitedText(ms) {
  const s = Math.max(0, Math.floor((ms || 0) / 1000));
  if (s < 60) return s + ' s';
  const min = Math.floor(s / 60);
  if (min < 60) return min + ' min';
  const h = Math.floor(min / 60);
  if (h < 24) return h + ' h' + (min % 60 ? ' ' + (min % 60) + ' min' : '');
  return Math.floor(h / 24) + ' d' + (h % 24 ? ' ' + (h % 24) + ' h' : '');
}

// The line a reminder puts on its card: "waiting 5 min — reminder", "waiting 20 min — escalated".
export function attentionText(step, waitedMs) {
  const what = step === 'escalate' ? 'escalated' : 'reminder';
  return 'waiting ' + waitedText(waitedMs) + ' \u2014 ' + what;
}

// The words of an expired card: what the rule was and what became of the request. Never a refusal
// by a person: nobody answered.
export function expiredText(outcome) {
  const o = outcome || {};
  return { title: 'Expired \u2014 ' + (o.rule || 'its deadline passed'), consequence: expiryConsequence(o.onExpiry) };
}

// What reached people while a request waited, from its ledger events: "pushed 12:01, reminded 12:06,
// escalated 12:10 (to chat:boss), expired 12:20", each time as near as the moment it was asked
// (clockTime); '' when nothing did.
const STEP_EVENTS = ['pushed', 'reminded', 'escalated', 'expired'];
export function attentionSteps(events, askedMs) {
  return (events || []).filter((e) => STEP_EVENTS.includes(e.event) && Number.isFinite(e.at))
    .map((e) => e.event + ' ' + clockTime(e.at, askedMs)
      + (e.event === 'escalated' && e.detail ? ' (' + e.detail + ')' : ''))
    .join(', ');
}

// A frame's moment is recent enough to interrupt someone for (a replayed reminder is not).
export function isFresh(iso, nowMs, withinMs = 60000) {
  const at = Date.parse(iso ?? '');
  return Number.isFinite(at) && nowMs - at <= withinMs;
}
