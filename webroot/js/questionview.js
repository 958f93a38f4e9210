// An agent's question (ACP elicitation) on its card: the message in full, then a form drawn from its
// schema (one labelled control per field, checked here before anything is sent) or a link to open
// (its host shown plainly, the whole URL small, never a live link), with Submit (or Open), Decline
// and Cancel; the gateway's refusal said on the card, the form kept; and once it ended, what was
// answered, a secret only as "hidden". question.js describes the fields and checks the values.
import { el } from './dom.js';
import { answeredBy, time } from './format.js';
import {
  answerSummary, checkAnswer, fieldsOf, linkOf, questionButtons, refusedField,
} from './question.js';

let seq = 0; // ids that tie a control to its help and its error

/**
 * Draws `question` into `section` (the card's .permission) and returns what the card keeps of it.
 * answer(frame) sends a permission_answer the card's way (its buttons wait) and says whether it went.
 */
export function drawQuestion(f, question, section, answer) {
  const q = { question, fields: [], controls: new Map(), error: el('p', 'question-error'), body: null };
  q.error.setAttribute('role', 'alert');
  if (question.message) section.append(el('div', 'question-message', question.message));
  const buttons = questionButtons(f.options, question);
  const options = el('div', 'options');
  const send = (option, content) => {
    q.error.textContent = '';
    const frame = { type: 'permission_answer', requestId: f.requestId, optionId: option.optionId };
    if (content) frame.content = content;
    if (!answer(frame)) q.error.textContent = 'Not sent: the connection is down. Try again in a moment.';
  };
  for (const o of buttons) {
    const b = el('button', o.kind, o.name);
    b.dataset.optionId = o.optionId;
    b.type = o.role === 'accept' && question.mode !== 'url' ? 'submit' : 'button';
    if (o.role !== 'accept' || question.mode === 'url') {
      b.addEventListener('click', () => {
        if (o.role === 'accept') {
          // Opened by the person's click, in a tab that cannot reach back into this page.
          const link = linkOf(question);
          if (!link) return;
          window.open(link.href, '_blank', 'noopener,noreferrer');
        }
        send(o);
      });
    }
    options.append(b);
  }
  if (question.mode === 'url') {
    const link = linkOf(question);
    const box = el('div', 'question-link');
    if (link) {
      box.append(el('div', 'question-domain', 'Opens ' + link.host), el('div', 'question-url', link.href));
    } else {
      box.append(el('div', 'question-domain', 'This link is not a web address: it cannot be opened here.'));
      options.querySelector('button.accept').disabled = true;
      options.querySelector('button.accept').dataset.never = 'true';
    }
    box.append(q.error, options);
    section.append(box);
    q.body = box;
    return q;
  }
  q.fields = fieldsOf(question.requestedSchema);
  const form = el('form', 'question-form');
  form.noValidate = true; // checked here, each message beside its field (the browser's own bubble is one at a time)
  if (q.fields.some((x) => x.required)) form.append(el('p', 'q-legend', '* required'));
  for (const field of q.fields) form.append(drawField(field, q.controls));
  form.append(q.error, options);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const { errors, content } = checkAnswer(q.fields, readForm(q));
    showErrors(q, errors);
    const bad = Object.keys(errors);
    if (bad.length) {
      q.error.textContent = bad.length === 1 ? 'Check the marked field.' : 'Check the ' + bad.length + ' marked fields.';
      q.controls.get(bad[0])?.focus.focus();
      return;
    }
    send(buttons[0], content);
  });
  section.append(form);
  q.body = form;
  return q;
}

// One field: its label (required marked), its control with the schema's constraints, help, an error line.
function drawField(field, controls) {
  const id = 'q' + ++seq;
  const help = field.help ? el('div', 'q-help', field.help) : null;
  const error = el('div', 'q-error');
  if (help) help.id = id + '-help';
  error.id = id + '-error';
  const described = (help ? help.id + ' ' : '') + error.id;
  const mark = (parent) => {
    if (!field.required) return;
    const star = el('span', 'q-required', ' *');
    star.setAttribute('aria-hidden', 'true');
    parent.append(star);
  };
  const wrap = el('div', 'q-field');
  wrap.dataset.field = field.name;
  const control = { wrap, error, field, inputs: [], focus: null };

  if (field.kind === 'boolean') {
    const label = el('label', 'q-check');
    const box = el('input');
    box.type = 'checkbox';
    box.id = id;
    box.checked = field.initial;
    box.setAttribute('aria-describedby', described);
    label.append(box, el('span', null, field.label));
    wrap.append(label);
    control.inputs.push(box);
  } else if (field.kind === 'multi' || (field.kind === 'choice' && field.required && field.choices.length <= 5)) {
    // A few choices as buttons to tap (radios, or checkboxes for several); a long list as a select below.
    const set = el('fieldset', 'q-choices');
    const legend = el('legend', null, field.label);
    mark(legend);
    set.append(legend);
    set.setAttribute('aria-describedby', described);
    for (const c of field.choices) {
      const label = el('label', 'q-check');
      const input = el('input');
      input.type = field.kind === 'multi' ? 'checkbox' : 'radio';
      input.name = id;
      input.value = c.value;
      if (field.kind === 'multi') input.checked = field.initial.includes(c.value);
      else input.checked = field.initial === c.value;
      if (field.kind === 'choice') input.required = true;
      label.append(input, el('span', null, c.label));
      set.append(label);
      control.inputs.push(input);
    }
    wrap.append(set);
  } else {
    const label = el('label', 'q-label', field.label);
    label.htmlFor = id;
    mark(label);
    let input;
    if (field.kind === 'choice') {
      input = el('select');
      const none = el('option', null, field.required ? 'Choose\u2026' : '\u2014');
      none.value = '';
      input.append(none);
      for (const c of field.choices) {
        const o = el('option', null, c.label);
        o.value = c.value;
        input.append(o);
      }
      input.value = field.initial;
    } else if (field.kind === 'number') {
      input = el('input');
      input.type = 'number';
      input.inputMode = field.integer ? 'numeric' : 'decimal';
      input.step = field.integer ? '1' : 'any';
      if (field.minimum !== null) input.min = String(field.minimum);
      if (field.maximum !== null) input.max = String(field.maximum);
      input.value = field.initial;
    } else {
      input = el('input');
      input.type = field.kind === 'text' ? field.inputType : 'text';
      if (field.kind === 'text') {
        if (field.minLength !== null) input.minLength = field.minLength;
        if (field.maxLength !== null) input.maxLength = field.maxLength;
        if (field.pattern !== null) input.pattern = field.pattern;
        // A secret is not offered to the browser's memory of what was typed.
        input.autocomplete = field.secret ? 'new-password' : 'off';
      }
      input.value = field.initial;
    }
    input.id = id;
    input.name = field.name;
    input.required = field.required;
    input.setAttribute('aria-describedby', described);
    wrap.append(label, input);
    control.inputs.push(input);
  }
  if (help) wrap.append(help);
  wrap.append(error);
  control.focus = control.inputs[0] || wrap;
  controls.set(field.name, control);
  return wrap;
}

// What each control holds, as checkAnswer reads it.
function readForm(q) {
  const raw = {};
  for (const [name, c] of q.controls) {
    const k = c.field.kind;
    if (k === 'boolean') raw[name] = c.inputs[0].checked;
    else if (k === 'multi') raw[name] = c.inputs.filter((i) => i.checked).map((i) => i.value);
    else if (c.inputs[0].type === 'radio') raw[name] = c.inputs.find((i) => i.checked)?.value ?? '';
    else raw[name] = c.inputs[0].validity?.badInput ? 'NaN' : c.inputs[0].value; // "1e" in a number field
  }
  return raw;
}

function showErrors(q, errors) {
  for (const [name, c] of q.controls) {
    const words = errors[name] || '';
    c.error.textContent = words;
    c.wrap.classList.toggle('invalid', !!words);
    for (const i of c.inputs) i.setAttribute('aria-invalid', words ? 'true' : 'false');
  }
}

/**
 * The gateway refused the answer (it checks every value again): its words on the card, and beside the
 * field they name; the form stays as filled, its buttons usable again.
 */
export function questionRefused(c, f) {
  const q = c.question;
  const words = f.message || f.code;
  q.error.textContent = 'Not taken: ' + words;
  const name = refusedField(q.fields, f.message);
  if (name) {
    showErrors(q, { [name]: f.message });
    q.controls.get(name).focus.focus({ preventScroll: true });
  }
  c.section.querySelectorAll('.options button').forEach((b) => { b.disabled = b.dataset.never === 'true'; });
  q.error.scrollIntoView({ block: 'nearest' });
}

/**
 * The question ended: the form gives way to what was answered (a secret as "hidden"), a link's
 * buttons go, and the verdict says how and by whom. `cancelled` is the words for an end without an
 * answer (cancelled or expired), drawn by the card.
 */
export function questionEnded(c, f, cancelled) {
  const q = c.question;
  const o = f.outcome || {};
  const summary = answerSummary(q.question, o);
  const by = ' \u2014 by ' + answeredBy(o.answeredBy) + (f.endedAt ? ' at ' + time(f.endedAt) : '');
  if (q.ended) {
    // a replay may end it twice: drawn once
  } else if (q.body.tagName === 'FORM') {
    // The values typed (a secret among them) leave the page with the form.
    const list = el('ul', 'question-answer');
    for (const r of summary?.rows || []) {
      const li = el('li', r.hidden ? 'hidden-value' : null);
      li.dataset.field = r.name;
      li.append(el('span', 'q-label', r.label), ': ', el('span', 'q-value', r.value));
      list.append(li);
    }
    q.body.replaceWith(list);
    q.body = list;
  } else {
    q.body.querySelector('.options')?.remove();
    q.error.remove();
  }
  q.ended = true;
  const verdict = c.section.querySelector('.verdict');
  verdict.textContent = summary ? summary.verdict + by : cancelled;
}
