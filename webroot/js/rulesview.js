// The Rules view (the menu's "Rules", #rules): every rule that answers for people — the config's,
// its presets, and the grants people's "always" made — in the gateway's words, with its use and how
// long it lasts; a grant in force can be revoked, here and wherever a line or a card names it
// (revoke_rule). Rules that ended are collapsed under "Revoked". rules.js words them.
import { hidePanel, showPanel } from './panels.js';
import { $, el, toast } from './dom.js';
import { views } from './views.js';
import { store } from './state.js';
import { send } from './socket.js';
import { SOURCE_WORDS, ruleExpiry, ruleGroups, ruleMade, ruleRevoked, ruleUse } from './rules.js';

let seq = 0;
let asked = null; // clientRef of the rules frame the view waits for
const revoking = new Map(); // clientRef of a revoke_rule -> its ruleId

export function showRules(visible) {
  if (visible) {
    showPanel('rules', 'Rules');
    loadRules();
  } else {
    hidePanel('rules');
  }
}

const shown = () => !$('rules').hidden;

function say(text, isError) {
  $('rules-note').textContent = text || '';
  $('rules-note').classList.toggle('error', !!isError);
}

function loadRules(note) {
  const clientRef = 'rules-' + ++seq;
  if (!send({ type: 'rules', clientRef })) { say('Not connected to the gateway: press Refresh once it is.', true); return; }
  asked = clientRef;
  say(note || 'Loading the rules\u2026');
}

// The gateway's list (an answer to the view's last question only).
export function rulesFrame(f) {
  if (f.clientRef == null || f.clientRef !== asked) return;
  asked = null;
  const now = Date.now();
  const g = ruleGroups(f.rules, now);
  $('rules-list').replaceChildren(...(g.active.length ? g.active.map((r) => ruleItem(r, now, true))
    : [el('li', 'meta', 'No rule answers for you now. A card\u2019s \u201cAlways allow\u201d can make one; the config can too.')]));
  $('rules-ended').hidden = g.ended.length === 0;
  $('rules-ended-title').textContent = g.endedTitle;
  $('rules-ended-list').replaceChildren(...g.ended.map((r) => ruleItem(r, now, false)));
  if (!$('rules-note').classList.contains('error') && $('rules-note').textContent.startsWith('Loading')) say('');
}

function ruleItem(r, now, active) {
  const li = el('li', 'rule ' + (active ? 'active' : r.revokedAt != null ? 'revoked' : 'expired'));
  li.dataset.ruleId = r.ruleId;
  const head = el('div', 'rule-head');
  head.append(el('span', 'badge source ' + (r.source || ''), SOURCE_WORDS[r.source] || r.source || 'rule'),
    el('span', 'badge effect ' + (r.effect || ''), r.effect || ''), el('code', 'rule-id', r.ruleId));
  li.append(head, el('p', 'words', r.words || r.ruleId));
  if (r.note) li.append(el('p', 'note', r.note));
  const grant = r.source === 'grant';
  // The gateway's words name a thread by its id; the page knows its title.
  const scoped = r.scope && typeof r.scope === 'object' ? store.state.threads.get(r.scope.thread) : null;
  const meta = [ruleUse(r, now), active ? ruleExpiry(r, now) : ruleRevoked(r, now) || ruleExpiry(r, now),
    grant ? ruleMade(r, now) : null, scoped ? 'thread \u201c' + (scoped.info.title || 'New thread') + '\u201d' : null]
    .filter(Boolean);
  li.append(el('p', 'meta', meta.join(' \u00b7 ')));
  if (!grant) li.append(el('p', 'from-config', ruleMade(r, now)));
  else if (active) li.append(revokeButton(r.ruleId));
  return li;
}

// A button that revokes grant `ruleId` (in the view, on an auto-answer line, on a card kept as one).
export function revokeButton(ruleId) {
  const b = el('button', 'revoke', 'Revoke');
  b.type = 'button';
  b.dataset.ruleId = ruleId;
  b.setAttribute('aria-label', 'Revoke rule ' + ruleId);
  b.title = 'Take this rule back: from the next request on, you are asked again';
  b.addEventListener('click', () => revoke(ruleId));
  return b;
}

// Every revoke button of a rule, in the view and in each thread's log (shown or not).
function buttonsOf(ruleId) {
  const roots = [$('rules'), ...[...views.values()].map((v) => v.log)];
  const selector = '.revoke[data-rule-id="' + CSS.escape(ruleId) + '"]';
  return roots.flatMap((root) => [...root.querySelectorAll(selector)]);
}

export function revoke(ruleId) {
  const clientRef = 'revoke-' + ++seq;
  if (!send({ type: 'revoke_rule', ruleId, clientRef })) return;
  revoking.set(clientRef, ruleId);
  for (const b of buttonsOf(ruleId)) b.disabled = true;
}

// rule_revoked: the grant no longer answers. Its buttons say so; the view lists it again.
export function ruleRevokedFrame(f) {
  const ruleId = f.rule?.ruleId || revoking.get(f.clientRef);
  revoking.delete(f.clientRef);
  if (!ruleId) return;
  for (const b of buttonsOf(ruleId)) {
    b.disabled = true;
    b.textContent = 'Revoked';
    b.classList.add('done');
  }
  if (shown()) loadRules('Rule ' + ruleId + ' revoked: you are asked again from now on.');
  else toast('Rule ' + ruleId + ' revoked: you are asked again from now on.');
}

// An error frame about the view's list or a revoke: said in the view (or a toast). True when it was.
export function rulesRefused(f) {
  if (f.clientRef == null) return false;
  const text = f.message ? f.message : f.code;
  if (f.clientRef === asked) {
    asked = null;
    say('The rules could not be listed: ' + text, true);
    return true;
  }
  const ruleId = revoking.get(f.clientRef);
  if (ruleId === undefined) return false;
  revoking.delete(f.clientRef);
  for (const b of buttonsOf(ruleId)) b.disabled = false;
  if (shown()) say('Rule ' + ruleId + ' was not revoked: ' + text, true);
  else toast('Rule ' + ruleId + ' was not revoked: ' + text);
  return true;
}

// The socket went down: no answer comes for what was asked.
export function rulesLost() {
  if (asked) {
    asked = null;
    say('The connection dropped: press Refresh once connected.', true);
  }
  for (const ruleId of revoking.values()) for (const b of buttonsOf(ruleId)) b.disabled = false;
  revoking.clear();
}

$('rules-open').addEventListener('click', () => showRules(true));
$('rules-refresh').addEventListener('click', () => loadRules());
