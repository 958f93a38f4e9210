// The chooser a card's "always" opens (.grant-chooser): the person makes it a grant the gateway keeps
// and can take back (a rule: how far it reaches, how long it lives, and for a command how many of
// its first words it covers), or lets the agent remember it as before, which Switchboard cannot
// take back. A sheet at the bottom on a phone, inside the card on a desktop; Escape cancels.
// rules.js words the choices; the gateway checks them again and may refuse (said here).
import { $, el, announce } from './dom.js';
import { store } from './state.js';
import { thread } from './store.js';
import { agentName } from './format.js';
import { projectName } from './projects.js';
import { LIFE_WORDS, REACH_WORDS, commandWords, grantOf, grantPreview, lives, reaches, settle } from './rules.js';

const phone = window.matchMedia('(max-width: 760px)');

// The one chooser open: {requestId, el, backdrop, opener, awaiting, ...}; null when none.
let current = null;

// Opens the chooser for `option` (an allow_always) of card `f`, inside `section` (a desktop) or as a
// sheet (a phone). answer(frame) sends a permission_answer the card's way and says whether it went;
// restore() makes the card's options usable again (the gateway refused the grant).
export function openChooser({ request: f, option, section, opener, answer, restore }) {
  if (current && current.requestId === f.requestId) { focusFirst(); return; }
  closeChooser();
  const info = thread(store.state, f.threadId)?.info || {};
  const about = {
    project: info.project || null,
    projectName: info.project ? projectName(store.state.projects, info.project) : null,
    agentName: agentName(store.state.agents, info.agent),
  };
  const toolCall = f.toolCall || {};
  const words = commandWords(toolCall.rawInput);
  let choices = settle({ reach: 'thread', life: 'thread', keep: null }, about, words);

  const box = el('div', 'grant-chooser');
  box.dataset.requestId = f.requestId;
  box.setAttribute('role', 'dialog');
  box.setAttribute('aria-labelledby', 'grant-title');
  box.setAttribute('aria-describedby', 'grant-preview');
  const title = el('h4', 'grant-title', 'Allow always, as a rule Switchboard keeps');
  title.id = 'grant-title';
  box.append(title, el('p', 'grant-hint', 'It answers for you from now on; you can revoke it here or in Rules.'));

  const reach = radios('reach', 'For', reaches(about), REACH_WORDS);
  const life = radios('life', 'How long', ['thread', 'day', 'forever'], LIFE_WORDS);
  box.append(reach.el, life.el);

  let chips = [];
  if (words && words.length > 1) {
    const fs = el('fieldset', 'choice words');
    fs.append(el('legend', null, 'Command'));
    const row = el('div', 'chips');
    chips = words.map((w, i) => {
      const chip = el('button', 'chip', w);
      chip.type = 'button';
      chip.addEventListener('click', () => {
        const kept = choices.keep ?? words.length;
        // A kept word keeps the command up to it; the last kept one, tapped again, is let go.
        choices = settle({ ...choices, keep: i + 1 === kept && i > 0 ? i : i + 1 }, about, words);
        render();
      });
      row.append(chip);
      return chip;
    });
    fs.append(row, el('p', 'grant-hint', 'Tap a word to keep the command up to it: the rule covers commands that '
      + 'start with the words kept.'));
    box.append(fs);
  }

  const preview = el('p', 'preview');
  preview.id = 'grant-preview';
  preview.setAttribute('aria-live', 'polite');
  const error = el('p', 'grant-error');
  error.setAttribute('role', 'alert');
  const allow = el('button', 'primary grant', 'Allow always (revocable)');
  allow.type = 'button';
  const agentKeeps = el('button', 'agent-keeps');
  agentKeeps.type = 'button';
  agentKeeps.append(el('span', null, 'Let the agent remember it'), el('small', null, 'Switchboard cannot take this back'));
  const cancel = el('button', 'cancel', 'Cancel');
  cancel.type = 'button';
  const actions = el('div', 'grant-actions');
  actions.append(allow, agentKeeps, cancel);
  box.append(preview, error, actions);

  function render() {
    reach.set(choices.reach, reaches(about));
    life.set(choices.life, lives(choices.reach));
    const kept = choices.keep ?? words?.length ?? 0;
    chips.forEach((chip, i) => chip.setAttribute('aria-pressed', String(i < kept)));
    preview.textContent = grantPreview(choices, toolCall, about);
  }
  reach.onChange((value) => { choices = settle({ ...choices, reach: value }, about, words); render(); });
  life.onChange((value) => { choices = settle({ ...choices, life: value }, about, words); render(); });

  allow.addEventListener('click', () => {
    error.textContent = '';
    const frame = { type: 'permission_answer', requestId: f.requestId, optionId: option.optionId,
      grant: grantOf(choices, words) };
    if (!answer(frame)) { error.textContent = 'Not connected to the gateway: try again once it is.'; return; }
    current.awaiting = true;
    busy(true);
    preview.textContent = 'Asking the gateway to keep it\u2026';
  });
  agentKeeps.addEventListener('click', () => {
    closeChooser(false); // first: the page behind a sheet takes the keyboard back
    answer({ type: 'permission_answer', requestId: f.requestId, optionId: option.optionId });
  });
  cancel.addEventListener('click', () => closeChooser(true));

  function busy(yes) {
    box.querySelectorAll('button, input').forEach((x) => { x.disabled = yes; });
    if (!yes) render();
  }

  let backdrop = null;
  if (phone.matches) {
    box.classList.add('sheet');
    box.setAttribute('aria-modal', 'true');
    backdrop = el('div', 'grant-backdrop');
    backdrop.addEventListener('click', () => closeChooser(true));
    document.body.append(backdrop, box);
    $('app').inert = true; // the keyboard stays in the sheet
  } else {
    (section.querySelector('.options') || section.lastChild).after(box);
  }
  current = { requestId: f.requestId, threadId: f.threadId, el: box, backdrop, opener, awaiting: false, error, busy,
    restore };
  render();
  focusFirst();
  if (!phone.matches) box.scrollIntoView({ block: 'nearest' });
  announce('Allow always: choose how far and how long');
}

// A group of radio buttons: el, set(value, allowed) (the allowed ones show), onChange(fn).
function radios(name, legend, values, words) {
  const fs = el('fieldset', 'choice ' + name);
  fs.append(el('legend', null, legend));
  const inputs = values.map((value) => {
    const label = el('label');
    const input = el('input');
    input.type = 'radio';
    input.name = 'grant-' + name;
    input.value = value;
    label.append(input, el('span', null, words[value]));
    fs.append(label);
    return input;
  });
  return {
    el: fs,
    set(value, allowed) {
      for (const input of inputs) {
        input.closest('label').hidden = !allowed.includes(input.value);
        input.checked = input.value === value;
      }
    },
    onChange(fn) { for (const input of inputs) input.addEventListener('change', () => { if (input.checked) fn(input.value); }); },
  };
}

function focusFirst() {
  current?.el.querySelector('input:checked, button:not(:disabled)')?.focus({ preventScroll: !phone.matches });
}

// Closes the chooser, if one is open; `refocus`: back to the option that opened it.
export function closeChooser(refocus = false) {
  if (!current) return;
  const { el: box, backdrop, opener } = current;
  current = null;
  box.remove();
  if (backdrop) {
    backdrop.remove();
    $('app').inert = false;
  }
  if (refocus && opener && opener.isConnected && !opener.disabled) opener.focus({ preventScroll: true });
}

// The card ended (answered here or elsewhere, cancelled, expired) or cannot be answered now.
export function chooserEnded(requestId) {
  if (current && current.requestId === requestId) closeChooser(false);
}

// An error frame about the grant the chooser sent: said in the chooser, which stays open to try
// again (narrower, or once). True when it was the chooser's.
export function grantRefused(f) {
  if (!current || !current.awaiting || f.requestId !== current.requestId) return false;
  if (f.code === 'already_answered') return false; // the card's end closes it
  current.awaiting = false;
  current.busy(false);
  current.restore?.();
  current.error.textContent = 'The gateway did not keep it: ' + (f.message || f.code);
  return true;
}

export const chooserOpen = () => !!current;

// Escape cancels the chooser before anything else hears it (the menu, the Changes panel).
document.addEventListener('keydown', (ev) => {
  if (ev.key !== 'Escape' || !current) return;
  ev.preventDefault();
  ev.stopPropagation();
  closeChooser(true);
}, true);
phone.addEventListener('change', () => closeChooser(false));
// Another thread shown (a notification's link, another tab's archive): the chooser was about this one.
store.subscribe((s, before) => {
  if (current && s.current !== before.current && s.current !== current.threadId) closeChooser(false);
});
