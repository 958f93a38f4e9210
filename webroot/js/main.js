// The Switchboard chat page: one /ws/chat socket, threads on the left, the open thread's events,
// tool calls, plan and permission cards on the right. This module logs in, connects and routes
// each frame to the module that draws it; docs/protocol-web.md ("The page's code") maps the others.
import { $, toast } from './dom.js';
import { dispatch } from './state.js';
import { connect, disconnect } from './socket.js';
import { event } from './acp.js';
import { attention, autoAnswered, card, resolved, stale, answerNotTaken } from './cards.js';
import { grantRefused } from './grant.js';
import { ruleRevokedFrame, rulesFrame, rulesRefused } from './rulesview.js';
import { usageFrame, usageRefused } from './usageview.js';
import { accounts, logoutFrame, logoutRefused } from './accounts.js';
import { promptRefused, sendUnsent } from './composer.js';
import { mountThreadList } from './threadlist.js';
import { mountAudit } from './audit.js';
import { changesFrame, changesRefused, projectActionFrame } from './changes.js';
import { sessionsFrame, sessionsRefused, threadRefused } from './picker.js';
import { leavingFrame, leavingRefused } from './leaving.js';
import { pushRefused, pushSubscribed, pushUnsubscribed } from './push.js';
import { readTarget } from './pushcheck.js';
import {
  connectionLost, goTo, landAtEnd, open, pendingCounts, resume, threadFrame, turn, welcome,
} from './threads.js';

mountThreadList(open);
mountAudit(open);

function receive(f) {
  switch (f.type) {
    case 'welcome': accounts(f.agents); return welcome(f);
    case 'thread': return threadFrame(f);
    case 'event': return event(f);
    case 'permission_request': return card(f);
    case 'permission_resolved': return resolved(f);
    case 'permission_stale': return stale(f);
    case 'permission_attention': return attention(f);
    case 'permission_auto': return autoAnswered(f);
    case 'rules': return rulesFrame(f);
    case 'rule_revoked': return ruleRevokedFrame(f);
    case 'usage': return usageFrame(f);
    case 'agent_logout': return logoutFrame(f);
    case 'push_subscribed': return pushSubscribed(f);
    case 'push_unsubscribed': return pushUnsubscribed(f);
    case 'turn': if (f.attached) landAtEnd(f.threadId); return turn(f.threadId, f.busy);
    case 'pending': return pendingCounts(f.counts);
    case 'changes': leavingFrame(f); return changesFrame(f); // asked before an archive, or by the panel
    case 'sessions': return sessionsFrame(f);
    case 'project_action': return projectActionFrame(f);
    case 'error':
      // Said where it was asked, in words.
      if (changesRefused(f) || threadRefused(f) || sessionsRefused(f) || leavingRefused(f) || pushRefused(f)
        || rulesRefused(f) || grantRefused(f) || usageRefused(f) || logoutRefused(f)) return;
      promptRefused(f);
      if (f.requestId && f.code !== 'already_answered' && answerNotTaken(f)) return; // said on a question's card
      return toast(f.message ? f.code + ': ' + f.message : f.code);
    case 'pong': return;
  }
}

// A notification tapped while this page is open (the service worker says which card), or a link to one.
navigator.serviceWorker?.addEventListener('message', (ev) => {
  if (ev.data && ev.data.type === 'open') goTo(readTarget(ev.data.url));
});
window.addEventListener('hashchange', () => {
  const link = readTarget(location.hash);
  if (!link) return;
  history.replaceState(null, '', location.pathname + location.search);
  goTo(link);
});

// ---- login ----

async function checkSession() {
  const r = await fetch('/api/session', { credentials: 'same-origin' });
  if (r.ok) start(); else showLogin();
}

function showLogin(message) {
  $('app').hidden = true;
  $('login').hidden = false;
  $('login-error').textContent = message ?? '';
  $('token').focus();
}

// Logged in: the words for why questions end come first (a replayed card may need them), then the socket.
async function start() {
  $('login').hidden = true;
  $('app').hidden = false;
  const r = await fetch('/api/reasons', { credentials: 'same-origin' }).catch(() => null);
  if (r && r.ok) dispatch({ type: 'reasons', reasons: (await r.json()).reasons });
  connect({
    opened() { resume(); sendUnsent(); },
    frame: receive,
    closed: connectionLost,
    refused() { showLogin('Your session ended; log in again.'); },
  });
}

$('login-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  // Asked on a person's click, as browsers require: a hidden tab can then say a question waits.
  if ('Notification' in window && Notification.permission === 'default') Notification.requestPermission();
  const r = await fetch('/api/login', {
    method: 'POST', credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ token: $('token').value.trim() }),
  });
  if (r.status === 204) { $('token').value = ''; start(); }
  else if (r.status === 401) showLogin('That token is not right.');
  else if (r.status === 429) showLogin('Too many wrong tokens from here; try again in ' + (r.headers.get('Retry-After') ?? 60) + ' s.');
  else showLogin('Login failed (' + r.status + ').');
});

$('logout').addEventListener('click', async () => {
  await fetch('/api/logout', { method: 'POST', credentials: 'same-origin' });
  disconnect();
  location.reload();
});

checkSession();
