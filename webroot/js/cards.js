// Permission cards: a question inside the box of the tool call it is about, its options as buttons
// (Alt+1…Alt+9 too; an "always" opens the grant chooser, grant.js), its deadline counting down and
// its reminders, and how it ended: chosen and by whom, kept as a grant, cancelled and why, expired by
// a rule, or stale. A request a rule answered has no card: one line says so (.auto-answer). An agent's
// question (toolCall.kind "question") is a card too, its form or link drawn by questionview.js.
import { $, el, announce, flash, toast } from './dom.js';
import { store } from './state.js';
import { thread } from './store.js';
import { views } from './views.js';
import { send } from './socket.js';
import { newTool, placeByTime, toolFor, renderToolBody } from './acp.js';
import { agentName, answeredBy, commandOf, keysHint, reasonText, shortPath, time } from './format.js';
import { attentionText, deadlineLine, deadlineNear, expiredText, expiryWarning, isFresh } from './countdown.js';
import { notifyHere } from './push.js';
import { chooserEnded, closeChooser, openChooser } from './grant.js';
import { revokeButton } from './rulesview.js';
import { autoAnswer } from './rules.js';
import { isQuestion, questionTitle } from './question.js';
import { drawQuestion, questionEnded, questionRefused } from './questionview.js';

export function card(f) {
  const t = thread(store.state, f.threadId);
  const v = views.get(f.threadId);
  if (!t || !v || v.cards.has(f.requestId)) return;
  const tc0 = f.toolCall || {};
  const askedAt = f.createdAt ? Date.parse(f.createdAt) : null;
  const question = isQuestion(tc0) ? tc0.question : null;
  // A question about one of the agent's tool calls goes in its box; the card's own id is the gateway's.
  const callId = question?.toolCallId ?? tc0.toolCallId;
  let tc = question && callId === undefined ? null : toolFor(v, callId, askedAt); // one box per question
  if (!tc) {
    // The agent asked about a call it never announced: the question brings its own box. An agent's
    // question's box is headed by the form's title (its message follows in full).
    tc = newTool(v, callId, askedAt);
    tc.data = question ? { kind: 'question', title: questionTitle(question) } : { ...tc0 };
    renderToolBody(tc.body, tc.data);
    placeByTime(v.log, tc.el, askedAt);
  }
  tc.el.classList.add('card');
  tc.el.classList.remove('resolved', 'expired');
  tc.el.dataset.requestId = f.requestId;
  const asker = agentName(store.state.agents, t.info.agent);
  const section = el('div', question ? 'permission question' : 'permission');
  section.append(el('div', 'ask', asker + (question ? ' asks you' : ' asks your permission')));
  const deadline = deadlineOf(f);
  if (deadline) section.append(deadline.el);
  const options = el('div', 'options');
  const usable = (yes) => section.querySelectorAll('.options button').forEach((x) => { x.disabled = !yes || x.dataset.never === 'true'; });
  // Sends an answer; the buttons wait for its end (or come back if it could not go).
  const answer = (frame) => {
    usable(false);
    if (!send(frame)) { usable(true); return false; }
    // keep the keyboard where the person types (a question's form is where they typed)
    if (!frame.grant && !question) $('input').focus({ preventScroll: true });
    return true;
  };
  if (question) {
    const q = drawQuestion(f, question, section, answer);
    section.append(el('div', 'verdict', 'Asked at ' + time(f.createdAt)));
    tc.el.append(section);
    v.cards.set(f.requestId, { el: tc.el, section, options: f.options || [], deadline, question: q });
    if (deadline) tickDeadlines();
    v.agentMsg = null;
    if (f.threadId === store.state.current && v.scrolled) {
      section.scrollIntoView({ block: 'nearest' });
      announce(asker + ' asks you: ' + (question.message || tc0.title || 'a question'));
    }
    return;
  }
  const argv = commandOf(tc0.rawInput);
  if (argv) {
    const cmd = el('div', 'command');
    cmd.append(el('code', null, argv.command));
    if (argv.cwd) cmd.append(el('span', 'cwd', ' in ' + shortPath(argv.cwd)));
    section.append(cmd);
  }
  if (tc0.rawInput !== undefined) {
    const d = el('details');
    d.append(el('summary', null, 'Input'), el('pre', null, JSON.stringify(tc0.rawInput, null, 2)));
    section.append(d);
  }
  for (const [i, o] of (f.options || []).entries()) {
    const b = el('button', o.kind, o.name);
    b.dataset.optionId = o.optionId;
    if (i < 9) b.setAttribute('aria-keyshortcuts', 'Alt+' + (i + 1));
    // An "always" the agent keeps cannot be taken back: the chooser offers one the gateway keeps.
    if (o.kind === 'allow_always') {
      b.title = 'Choose: a rule Switchboard keeps and can revoke, or the agent remembers it for the rest of this session';
      b.setAttribute('aria-haspopup', 'dialog');
    }
    if (o.kind === 'reject_always') b.title = 'Refuse this kind of action for the rest of this session';
    b.addEventListener('click', () => {
      if (o.kind === 'allow_always') {
        openChooser({ request: f, option: o, section, opener: b, answer, restore: () => usable(true) });
        return;
      }
      closeChooser();
      answer({ type: 'permission_answer', requestId: f.requestId, optionId: o.optionId });
    });
    options.append(b);
  }
  const keys = el('div', 'keys', keysHint(Math.min(9, (f.options || []).length)));
  section.append(options, keys, el('div', 'verdict', 'Asked at ' + time(f.createdAt)));
  tc.el.append(section);
  v.cards.set(f.requestId, { el: tc.el, section, options: f.options || [], deadline });
  if (deadline) tickDeadlines();
  v.agentMsg = null;
  // A question must be seen: bring it into view (the buttons above the composer).
  if (f.threadId === store.state.current && v.scrolled) {
    section.scrollIntoView({ block: 'nearest' });
    announce(asker + ' asks your permission: ' + (tc0.title || 'a tool call'));
  }
}

export function resolved(f) {
  chooserEnded(f.requestId);
  const c = views.get(f.threadId)?.cards.get(f.requestId);
  if (!c) return;
  c.el.classList.remove('stale');
  c.el.classList.add('resolved');
  c.section.querySelectorAll('.options button').forEach((b) => { b.disabled = true; });
  const o = f.outcome || {};
  let text;
  if (c.question) {
    // A question's end: what was answered (never a secret), or why it ended without an answer.
    const expired = o.outcome === 'expired' ? expiredText(o) : null;
    c.el.classList.toggle('expired', !!expired);
    const words = expired ? expired.title + (expired.consequence ? ': ' + expired.consequence : '')
      : 'Cancelled: ' + reasonText(store.state.reasons, o.reason) + ' (' + time(f.endedAt) + ')';
    questionEnded(c, f, words);
    return;
  } else if (o.outcome === 'expired') {
    // Nobody answered in time and a rule ended it: said as such, never as a person's refusal.
    const words = expiredText(o);
    const note = el('div', 'expired-note');
    note.append(el('strong', null, words.title));
    if (words.consequence) note.append(el('span', 'expired-then', words.consequence));
    c.section.querySelector('.expired-note')?.remove(); // a replay may end it twice
    c.section.querySelector('.options').before(note);
    c.el.classList.add('expired');
    text = f.endedAt ? 'Ended at ' + time(f.endedAt) : 'Ended';
  } else if (o.outcome === 'selected' && o.grant && o.grant.ruleId) {
    // "Always" kept by the gateway as a grant: the agent was answered once, and the rule can be revoked.
    const always = c.options.find((x) => x.kind === 'allow_always');
    const id = always ? always.optionId : o.optionId;
    c.section.querySelector('.options button[data-option-id="' + CSS.escape(id) + '"]')?.classList.add('chosen');
    const verdict = c.section.querySelector('.verdict');
    verdict.classList.add('granted');
    const kept = el('span', 'kept', 'Allowed \u2014 kept as rule ');
    kept.append(el('code', 'rule-id', o.grant.ruleId));
    verdict.replaceChildren(kept, revokeButton(o.grant.ruleId),
      el('span', 'by', 'answered by ' + answeredBy(o.answeredBy) + ' at ' + time(f.endedAt)));
    return;
  } else if (o.outcome === 'selected') {
    const chosen = c.options.find((x) => x.optionId === o.optionId);
    c.section.querySelector('.options button[data-option-id="' + CSS.escape(o.optionId) + '"]')?.classList.add('chosen');
    text = (chosen ? chosen.name : o.optionId) + ' — answered by ' + answeredBy(o.answeredBy) + ' at ' + time(f.endedAt);
  } else {
    text = 'Cancelled: ' + reasonText(store.state.reasons, o.reason) + ' (' + time(f.endedAt) + ')';
  }
  c.section.querySelector('.verdict').textContent = text;
}

// A request a rule answered (permission_auto, live or in history): no card, one line in the tool
// call's box when there is one (as a card is placed), else in the stream. A grant's line can revoke it.
export function autoAnswered(f) {
  const v = views.get(f.threadId);
  if (!v || v.autos.has(f.requestId)) return;
  const words = autoAnswer(f);
  const line = el('div', 'auto-answer ' + (words.allowed ? 'allowed' : 'refused'));
  line.dataset.requestId = f.requestId;
  if (words.ruleId) line.dataset.ruleId = words.ruleId;
  line.append(el('span', 'auto-text', words.text));
  const endedAt = Date.parse(f.endedAt ?? '');
  const at = Number.isFinite(endedAt) ? endedAt : null;
  let tc = f.toolCallId ? toolFor(v, f.toolCallId, at) : null;
  if (!tc && f.toolCallId) {
    // The rule answered before the call's own event reached the page (the two travel apart, the
    // event through the store): the line brings the call's box, which that event fills when it comes.
    tc = newTool(v, f.toolCallId, at);
    v.tools.set(f.toolCallId, tc);
    tc.data = { toolCallId: f.toolCallId, title: f.title || f.toolCallId };
    renderToolBody(tc.body, tc.data);
    placeByTime(v.log, tc.el, at);
  }
  if (!tc && f.title) line.append(el('span', 'auto-title', f.title)); // no box names the tool call
  if (words.matched) line.append(el('small', 'matched', words.matched));
  if (words.revocable) line.append(revokeButton(words.ruleId));
  line.title = (words.allowed ? 'Allowed' : 'Refused') + ' at ' + time(f.endedAt) + ' by rule ' + (words.ruleId || '');
  const stick = v.log.scrollHeight - v.log.scrollTop - v.log.clientHeight < 80;
  v.log.querySelector('.empty')?.remove();
  (tc ? tc.el : v.log).append(line);
  v.autos.set(f.requestId, line);
  v.agentMsg = null;
  if (stick && f.threadId === store.state.current && v.scrolled) v.log.scrollTop = v.log.scrollHeight;
}

// A card with a deadline: its line, "expires 14:32 · 9:41 left", and what then happens.
function deadlineOf(f) {
  const ms = Date.parse(f.deadline ?? '');
  if (!Number.isFinite(ms)) return null;
  const line = el('div', 'deadline');
  const when = el('span', 'deadline-when', deadlineLine(ms, Date.now()));
  line.append(when);
  const then = [expiryWarning(f.onExpiry), f.deadlineRule && '(' + f.deadlineRule + ')'].filter(Boolean).join(' ');
  if (then) line.append(el('span', 'deadline-then', then));
  line.classList.toggle('near', deadlineNear(ms, Date.now()));
  return { ms, el: line, when };
}

// Every waiting card's countdown, once a second while there is one; ended cards stop counting.
let ticker = null;
function tickDeadlines() {
  const now = Date.now();
  let live = 0;
  for (const v of views.values()) {
    for (const c of v.cards.values()) {
      if (!c.deadline || c.el.classList.contains('resolved')) continue;
      live++;
      c.deadline.when.textContent = deadlineLine(c.deadline.ms, now);
      c.deadline.el.classList.toggle('near', deadlineNear(c.deadline.ms, now));
    }
  }
  if (live && !ticker) ticker = setInterval(tickDeadlines, 1000);
  if (!live && ticker) {
    clearInterval(ticker);
    ticker = null;
  }
}

// A reminder or an escalation of a card still waiting: a line on it ("waiting 5 min — reminder"),
// the card brought to the eye again, and a notification when the tab is hidden (not for a replay).
export function attention(f) {
  const v = views.get(f.threadId);
  const c = v?.cards.get(f.requestId);
  if (!c || c.el.classList.contains('resolved')) return;
  let line = c.section.querySelector('.attention');
  if (!line) {
    line = el('div', 'attention');
    (c.deadline ? c.deadline.el : c.section.querySelector('.ask')).after(line);
  }
  line.textContent = attentionText(f.step, f.waitedMs);
  line.classList.toggle('escalated', f.step === 'escalate');
  flash(c.el);
  const t = thread(store.state, f.threadId);
  const fresh = isFresh(f.at, Date.now());
  if (f.threadId === store.state.current) {
    if (v.scrolled) c.section.scrollIntoView({ block: 'nearest' });
  } else if (fresh && !document.hidden) {
    toast('Still waiting in ' + (t?.info.title || 'another thread') + ': ' + line.textContent);
  }
  if (fresh && document.hidden) {
    notifyHere('Switchboard: still waiting for your answer', {
      body: (t?.info.title ? t.info.title + ': ' : '') + line.textContent,
      tag: f.requestId, renotify: true,
      data: { url: '/#thread=' + encodeURIComponent(f.threadId) + '&request=' + encodeURIComponent(f.requestId) },
    });
  }
}

// An answer the gateway did not take (its node did not answer in time, say): the card stays
// answerable, its buttons usable again, and it says why. An ended request's card ends by itself.
// True when a question's card said it (no toast needed).
export function answerNotTaken(f) {
  let said = false;
  for (const v of views.values()) {
    const c = v.cards.get(f.requestId);
    if (!c || c.el.classList.contains('resolved') || c.el.classList.contains('stale')) continue;
    if (c.question) {
      // The gateway checks a question's answer again: its words on the card, beside the field they name.
      questionRefused(c, f);
      said = true;
      continue;
    }
    c.section.querySelectorAll('.options button').forEach((b) => { b.disabled = false; });
    c.section.querySelector('.verdict').textContent = 'Not taken: ' + (f.message || f.code) + '. Try again.';
  }
  return said;
}

// Cluster mode: the node that keeps these requests' ledger left. Their cards stay, unanswerable and
// saying why, until it is back (answerable again) or their end arrives.
export function stale(f) {
  const ids = new Set(f.requestIds || []);
  for (const [threadId, v] of views) {
    for (const [id, c] of v.cards) {
      if (!ids.has(id) || c.el.classList.contains('resolved')) continue;
      if (f.stale) chooserEnded(id);
      c.el.classList.toggle('stale', !!f.stale);
      c.section.querySelectorAll('.options button').forEach((b) => { b.disabled = !!f.stale || b.dataset.never === 'true'; });
      c.section.querySelector('.verdict').textContent = f.stale
        ? 'Cannot be answered now: ' + (f.reason || 'its node left the cluster')
        : 'Answerable again';
      if (threadId === store.state.current) c.section.scrollIntoView({ block: 'nearest' }); // the why, in view
    }
  }
}

// Alt+1..9 answers the current thread's waiting question with its n-th option (the oldest first):
// no mouse, no leaving the composer.
document.addEventListener('keydown', (ev) => {
  const current = store.state.current;
  if (!ev.altKey || ev.ctrlKey || ev.metaKey || !/^Digit[1-9]$/.test(ev.code) || !current) return;
  const v = views.get(current);
  const waiting = v && [...v.cards.values()].find((c) => !c.el.classList.contains('resolved')
    && c.section.querySelector('.options button:not(:disabled)'));
  const button = waiting?.section.querySelectorAll('.options button')[Number(ev.code.slice(5)) - 1];
  if (button && !button.disabled) {
    ev.preventDefault();
    button.click();
  }
});
