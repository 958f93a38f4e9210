// The permission audit: the last 100 requests, newest first, from GET /api/permissions, each with
// how it ended and what reached people while it waited (pushes, reminders, escalations, expiry).
import { $, el, toast } from './dom.js';
import { store } from './state.js';
import { setMenu } from './menu.js';
import { reasonText } from './format.js';
import { attentionSteps, expiredText } from './countdown.js';
import { closeChanges } from './changes.js';

let openThread = () => {};

export function showAudit(visible) {
  $('audit').hidden = !visible;
  $('log').hidden = visible;
  $('composer').hidden = visible;
  if (visible) {
    $('rules').hidden = true;
    $('usage-view').hidden = true;
    $('plan').hidden = true;
    $('project-bar').hidden = true;
    closeChanges();
    $('thread-title').textContent = 'Permission audit';
    setMenu(false);
    loadAudit();
  }
}

async function loadAudit() {
  const r = await fetch('/api/permissions?state=all&limit=100', { credentials: 'same-origin' });
  if (!r.ok) { toast('Could not load the audit (' + r.status + ')'); return; }
  const { requests } = await r.json();
  const list = $('audit-list');
  if (!requests.length) { list.replaceChildren(el('li', 'meta', 'No permission requests yet.')); return; }
  list.replaceChildren(...requests.map((q) => {
    const li = el('li');
    li.dataset.requestId = q.requestId;
    const tc = q.toolCall || {};
    li.append(el('span', 'what', (tc.kind ? tc.kind + ': ' : '') + (tc.title || tc.toolCallId || 'a tool call')));
    const o = q.outcome;
    let verdict;
    if (!o) verdict = el('span', 'pending', 'waiting for an answer');
    else if (o.outcome === 'selected') {
      const option = (q.options || []).find((x) => x.optionId === o.optionId);
      const by = o.answeredBy || {};
      verdict = el('span', 'selected', (option ? option.name : o.optionId) + ' (' + o.kind + ') — answered by '
        + (by.user ? by.user + ' on ' : '') + by.surface);
    } else if (o.outcome === 'expired') {
      const words = expiredText(o);
      verdict = el('span', 'expired', words.title + (words.consequence ? ': ' + words.consequence : ''));
    } else verdict = el('span', 'cancelled', 'Cancelled: ' + reasonText(store.state.reasons, o.reason));
    li.append(verdict);
    const steps = attentionSteps(q.events, q.createdAt);
    if (steps) li.append(el('span', 'steps', steps));
    const thread = store.state.threads.get(q.threadId);
    if (thread) {
      const go = el('button', 'link', 'Open the thread');
      go.addEventListener('click', () => openThread(q.threadId));
      li.append(go);
    }
    li.append(el('span', 'meta', 'Asked ' + new Date(q.createdAt).toLocaleString()
      + (q.endedAt ? ', ended ' + new Date(q.endedAt).toLocaleString() : '')
      + ' · thread ' + (thread?.info.title || q.threadId) + ' · agent ' + (q.agentId || '')));
    return li;
  }));
}

// `open(threadId)` is what "Open the thread" does.
export function mountAudit(open) {
  openThread = open;
  $('audit-open').addEventListener('click', () => showAudit(true));
  $('audit-refresh').addEventListener('click', loadAudit);
}
