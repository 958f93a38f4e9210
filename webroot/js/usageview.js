// The Usage view (the menu's "Usage", #usage-view): what agents said they cost (ACP usage_update),
// the last 30 days — the span's total per agent and currency at the top, then each day, newest first,
// with each agent's amount and the day's total. usage.js groups, sums and words it.
import { hidePanel, showPanel } from './panels.js';
import { $, el } from './dom.js';
import { store } from './state.js';
import { send } from './socket.js';
import { NOTHING_REPORTED, usageSummary } from './usage.js';

const DAYS = 30;
let seq = 0;
let asked = null; // clientRef of the usage frame the view waits for

export function showUsage(visible) {
  if (visible) {
    showPanel('usage-view', 'Usage');
    loadUsage();
  } else {
    hidePanel('usage-view');
  }
}

function say(text, isError) {
  $('usage-note').textContent = text || '';
  $('usage-note').classList.toggle('error', !!isError);
}

function loadUsage() {
  const clientRef = 'usage-' + ++seq;
  if (!send({ type: 'usage', days: DAYS, clientRef })) { say('Not connected to the gateway: press Refresh once it is.', true); return; }
  asked = clientRef;
  say('Loading what agents reported\u2026');
}

// The gateway's answer to the view's last question.
export function usageFrame(f) {
  if (f.clientRef == null || f.clientRef !== asked) return;
  asked = null;
  say('');
  const s = usageSummary(f.days, store.state.agents, Date.now());
  $('usage-totals').hidden = s.empty;
  $('usage-totals-list').replaceChildren(...s.totals.map((t) => line(t.name, t.text, t.agentId, t.currency)));
  if (s.empty) {
    $('usage-days').replaceChildren(el('li', 'usage-empty', NOTHING_REPORTED));
    return;
  }
  $('usage-days').replaceChildren(...s.days.map((d) => {
    const li = el('li', 'usage-day');
    li.dataset.day = d.day;
    const head = el('h3', 'usage-day-head', d.label);
    if (d.label !== d.day) head.title = d.day;
    const rows = el('ul', 'usage-lines');
    rows.append(...d.rows.map((r) => line(r.name, r.text, r.agentId, r.currency)));
    const totals = el('ul', 'usage-lines usage-day-total');
    totals.append(...d.totals.map((t) => line('Total', t.text, null, t.currency)));
    li.append(head, rows, totals);
    return li;
  }));
}

// One line: who (or "Total") on the left, the amount and currency on the right.
function line(label, amount, agentId, currency) {
  const li = el('li', 'usage-line');
  if (agentId) li.dataset.agentId = agentId;
  li.dataset.currency = currency;
  li.append(el('span', 'usage-who', label), el('span', 'usage-amount', amount));
  return li;
}

// An error frame about the view's question: said in the view. True when it was.
export function usageRefused(f) {
  if (f.clientRef == null || f.clientRef !== asked) return false;
  asked = null;
  say('What agents cost could not be read: ' + (f.message || f.code), true);
  return true;
}

// The socket went down: no answer comes for what was asked.
export function usageLost() {
  if (!asked) return;
  asked = null;
  say('The connection dropped: press Refresh once connected.', true);
}

$('usage-open').addEventListener('click', () => showUsage(true));
$('usage-refresh').addEventListener('click', () => loadUsage());
