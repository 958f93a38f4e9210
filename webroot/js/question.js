// An agent's question (ACP elicitation) in fields, values and words: pure functions, no DOM (Node's
// tests import this module). A question comes as a permission card whose toolCall has kind
// "question" and `question`: a form (a restricted JSON Schema, one flat object of strings, numbers,
// booleans, single and multiple choices) or a URL to open. questionview.js draws what these describe.

export const isQuestion = (toolCall) => !!toolCall && toolCall.kind === 'question'
  && !!toolCall.question && typeof toolCall.question === 'object';

// The input a string's format asks for (a date-time is typed in local time: isoWithOffset).
const INPUT_OF_FORMAT = { email: 'email', uri: 'url', date: 'date', 'date-time': 'datetime-local', password: 'password' };

const num = (x) => (typeof x === 'number' && Number.isFinite(x) ? x : null);
const count = (x) => (Number.isInteger(x) && x >= 0 ? x : null);

// A choice's values and words: enum (with the older enumNames), or oneOf/anyOf [{const, title}].
function choicesOf(p) {
  if (!p || typeof p !== 'object') return null;
  if (Array.isArray(p.enum)) {
    return p.enum.filter((v) => typeof v === 'string').map((v, i) => ({
      value: v, label: Array.isArray(p.enumNames) && typeof p.enumNames[i] === 'string' ? p.enumNames[i] : v }));
  }
  const list = Array.isArray(p.oneOf) ? p.oneOf : Array.isArray(p.anyOf) ? p.anyOf : null;
  if (!list) return null;
  return list.filter((c) => c && typeof c.const === 'string')
    .map((c) => ({ value: c.const, label: typeof c.title === 'string' && c.title ? c.title : c.const }));
}

/**
 * The fields a form asks for, in the schema's order: one description each, which the page turns into
 * one labelled control and checkAnswer into one typed value. `kind` is text | number | boolean |
 * choice | multi, or unsupported (a shape the gateway should not have let through).
 */
export function fieldsOf(schema) {
  const props = schema && typeof schema.properties === 'object' && schema.properties ? schema.properties : {};
  const required = new Set(Array.isArray(schema?.required) ? schema.required : []);
  return Object.entries(props).map(([name, p0]) => {
    const p = p0 && typeof p0 === 'object' ? p0 : {};
    const field = {
      name, label: typeof p.title === 'string' && p.title ? p.title : name,
      help: typeof p.description === 'string' ? p.description : '', required: required.has(name),
    };
    if (p.type === 'string') {
      const choices = choicesOf(p);
      if (choices) {
        return { ...field, kind: 'choice', choices,
          initial: choices.some((c) => c.value === p.default) ? p.default : '' };
      }
      const secret = p.writeOnly === true || p.format === 'password';
      const inputType = secret ? 'password' : INPUT_OF_FORMAT[p.format] || 'text';
      let initial = typeof p.default === 'string' && !secret ? p.default : '';
      if (inputType === 'datetime-local') initial = localInputOf(initial);
      return { ...field, kind: 'text', inputType, secret, format: p.format || null,
        minLength: count(p.minLength), maxLength: count(p.maxLength),
        pattern: typeof p.pattern === 'string' ? p.pattern : null, initial };
    }
    if (p.type === 'number' || p.type === 'integer') {
      return { ...field, kind: 'number', integer: p.type === 'integer', minimum: num(p.minimum), maximum: num(p.maximum),
        initial: num(p.default) === null ? '' : String(p.default) };
    }
    if (p.type === 'boolean') return { ...field, kind: 'boolean', initial: p.default === true };
    if (p.type === 'array') {
      const choices = choicesOf(p.items);
      if (choices) {
        const initial = Array.isArray(p.default) ? choices.map((c) => c.value).filter((v) => p.default.includes(v)) : [];
        return { ...field, kind: 'multi', choices, minItems: count(p.minItems), maxItems: count(p.maxItems), initial };
      }
    }
    return { ...field, kind: 'unsupported', initial: '' };
  });
}

const chars = (s) => [...s].length; // JSON Schema counts characters (code points), not UTF-16 units
const plural = (n, one, many) => n + ' ' + (n === 1 ? one : many);

function patternMatches(pattern, value) {
  let re;
  try {
    re = new RegExp(pattern, 'u');
  } catch {
    return true; // a pattern this browser cannot read: the gateway checks it
  }
  return re.test(value);
}

const LOCAL = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?$/;
const pad = (n) => String(n).padStart(2, '0');

/**
 * A datetime-local input's value ("2026-12-02T16:30") as an ISO-8601 instant with its offset
 * ("2026-12-02T16:30:00+01:00"); `offsetMinutes` east of UTC, by default the local clock's then.
 * Null for anything else.
 */
export function isoWithOffset(local, offsetMinutes) {
  const m = LOCAL.exec(local || '');
  if (!m) return null;
  const [y, mo, d, h, mi, s = '00'] = m.slice(1);
  const at = new Date(+y, +mo - 1, +d, +h, +mi, +s);
  if (at.getFullYear() !== +y || at.getMonth() !== +mo - 1 || at.getDate() !== +d) return null;
  const off = offsetMinutes ?? -at.getTimezoneOffset();
  const sign = off < 0 ? '-' : '+';
  const abs = Math.abs(off);
  return `${y}-${mo}-${d}T${h}:${mi}:${s}${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/** An ISO-8601 instant as a datetime-local input shows it, on the local clock; "" when it is none. */
export function localInputOf(iso) {
  const ms = Date.parse(iso || '');
  if (!Number.isFinite(ms)) return '';
  const t = new Date(ms);
  return `${t.getFullYear()}-${pad(t.getMonth() + 1)}-${pad(t.getDate())}T${pad(t.getHours())}:${pad(t.getMinutes())}`;
}

function checkText(f, v) {
  const n = chars(v);
  if (f.minLength !== null && n < f.minLength) return { error: 'Needs at least ' + plural(f.minLength, 'character', 'characters') };
  if (f.maxLength !== null && n > f.maxLength) return { error: 'At most ' + plural(f.maxLength, 'character', 'characters') };
  if (f.pattern !== null && !patternMatches(f.pattern, v)) return { error: 'Not in the form asked for (' + f.pattern + ')' };
  if (f.format === 'email' && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v)) return { error: 'Needs an email address' };
  if (f.format === 'uri') {
    let ok = false;
    try { ok = /^[a-z][a-z0-9+.-]*:/i.test(v) && !!new URL(v); } catch { ok = false; }
    if (!ok) return { error: 'Needs a full address, like https://example.com' };
  }
  if (f.format === 'date' && !(/^\d{4}-\d{2}-\d{2}$/.test(v) && Number.isFinite(Date.parse(v)))) {
    return { error: 'Needs a date' };
  }
  if (f.format === 'date-time') {
    const iso = isoWithOffset(v) ?? (Number.isFinite(Date.parse(v)) && /[zZ]|[+-]\d{2}:\d{2}$/.test(v) ? v : null);
    return iso ? { value: iso } : { error: 'Needs a date and a time' };
  }
  return { value: v };
}

function checkNumber(f, s) {
  const n = Number(s);
  if (!Number.isFinite(n)) return { error: 'Needs a number' };
  if (f.integer && !Number.isInteger(n)) return { error: 'Needs a whole number' };
  if (f.minimum !== null && n < f.minimum) return { error: 'At least ' + f.minimum };
  if (f.maximum !== null && n > f.maximum) return { error: 'At most ' + f.maximum };
  return { value: n };
}

/**
 * Checks what the person filled in against the fields: `raw` maps each name to what its control
 * holds (a string; for a boolean true/false; for a multi-select the values ticked). Returns
 * {errors: {name: words}, content}: content typed as the schema says (numbers as numbers, booleans,
 * arrays of strings), empty optional fields left out; send it only when errors is empty.
 */
export function checkAnswer(fields, raw) {
  const errors = {};
  const content = {};
  for (const f of fields) {
    const r = raw ? raw[f.name] : undefined;
    let out;
    if (f.kind === 'boolean') {
      out = { value: r === true };
    } else if (f.kind === 'multi') {
      const ticked = Array.isArray(r) ? r : [];
      const known = f.choices.map((c) => c.value);
      if (ticked.some((v) => !known.includes(v))) out = { error: 'Not one of the choices' };
      else if (!ticked.length && !f.required) out = {};
      else if (!ticked.length) out = { error: 'Choose at least one' };
      else if (f.minItems !== null && ticked.length < f.minItems) out = { error: 'Choose at least ' + f.minItems };
      else if (f.maxItems !== null && ticked.length > f.maxItems) out = { error: 'Choose at most ' + f.maxItems };
      else out = { value: known.filter((v) => ticked.includes(v)) };
    } else if (f.kind === 'unsupported') {
      out = {};
    } else {
      const s = typeof r === 'string' ? r : r === undefined || r === null ? '' : String(r);
      if (s.trim() === '') out = f.required ? { error: f.kind === 'choice' ? 'Choose one' : 'Needs an answer' } : {};
      else if (f.kind === 'choice') out = f.choices.some((c) => c.value === s) ? { value: s } : { error: 'Not one of the choices' };
      else if (f.kind === 'number') out = checkNumber(f, s.trim());
      else out = checkText(f, s);
    }
    if (out.error) errors[f.name] = out.error;
    else if (out.value !== undefined) content[f.name] = out.value;
  }
  return { errors, content };
}

/**
 * The field a gateway's refusal names, or null: by its name in parentheses after its title ("\"Release
 * name\" (name) needs at least 2 characters"), or, a field without a title, by its name first ("colour is
 * required").
 */
export function refusedField(fields, message) {
  const text = message || '';
  const hit = fields.find((f) => text.includes('(' + f.name + ')')) || fields.find((f) => text.startsWith(f.name + ' '));
  return hit ? hit.name : null;
}

/** A URL question's link, only when it is http(s): {href, host}; null for anything else. */
export function linkOf(question) {
  let u;
  try {
    u = new URL(question?.url ?? '');
  } catch {
    return null;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  // The host the link really goes to (a name in Unicode arrives as punycode: what it is, not what it looks like).
  return { href: u.href, host: u.host };
}

/**
 * The card's three buttons from the gateway's options: Submit (or "Open <host>"), Decline, Cancel.
 * The accept:<value> shortcuts a chat shows as buttons are left to the form.
 */
export function questionButtons(options, question) {
  const list = Array.isArray(options) ? options : [];
  const find = (id) => list.find((o) => o && o.optionId === id);
  const link = question?.mode === 'url' ? linkOf(question) : null;
  const accept = find('accept') || { optionId: 'accept', kind: 'accept',
    name: question?.mode === 'url' ? 'Open ' + (link ? link.host : 'the link') : 'Submit' };
  return [
    { ...accept, kind: 'accept', role: 'accept' },
    { ...(find('decline') || { optionId: 'decline', name: 'Decline' }), kind: 'decline', role: 'decline' },
    { ...(find('cancel') || { optionId: 'cancel', name: 'Cancel' }), kind: 'cancel', role: 'cancel' },
  ];
}

/** A value as the ended card shows it: Yes/No, a choice's title, several joined with ", ". */
export function valueText(field, value) {
  if (typeof value === 'boolean') return value ? 'Yes' : 'No';
  const label = (v) => field?.choices?.find((c) => c.value === v)?.label ?? String(v);
  if (Array.isArray(value)) return value.map(label).join(', ');
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return label(value);
}

function kindOf(outcome) {
  if (outcome.kind === 'accept' || outcome.kind === 'decline' || outcome.kind === 'cancel') return outcome.kind;
  const id = String(outcome.optionId || '');
  if (id === 'accept' || id.startsWith('accept:')) return 'accept';
  return id === 'decline' || id === 'cancel' ? id : null;
}

/**
 * What an ended question says, from its question and permission_resolved's outcome (a replay has
 * nothing else): {verdict: "Answered" | "Declined" | "Cancelled" | "Opened auth.example.com",
 * rows: [{label, value, hidden}]}; null for an end without an answer (cancelled, expired). A secret
 * is never shown: a field the answer hides, or one the schema makes secret, reads "hidden".
 */
export function answerSummary(question, outcome) {
  const o = outcome || {};
  if (o.outcome !== 'selected') return null;
  const kind = kindOf(o);
  if (kind === 'decline') return { verdict: 'Declined', rows: [] };
  if (kind === 'cancel') return { verdict: 'Cancelled', rows: [] };
  if (question?.mode === 'url') {
    const link = linkOf(question);
    return { verdict: 'Opened ' + (link ? link.host : question.domain || 'the link'), rows: [] };
  }
  const fields = fieldsOf(question?.requestedSchema);
  const answer = o.answer && typeof o.answer === 'object' ? o.answer : {};
  let content = answer.content && typeof answer.content === 'object' ? answer.content : {};
  const id = String(o.optionId || '');
  // A chat's one-tap answer (accept:<value>) of a form with one field, when the end does not say the content.
  if (!Object.keys(content).length && id.startsWith('accept:') && fields.length === 1) {
    const f = fields[0];
    const v = id.slice('accept:'.length);
    content = { [f.name]: f.kind === 'boolean' ? v === 'true' : v };
  }
  const hidden = new Set(Array.isArray(answer.hidden) ? answer.hidden : []);
  const rows = [];
  const known = new Set();
  for (const f of fields) {
    known.add(f.name);
    if (hidden.has(f.name) || (f.secret && Object.hasOwn(content, f.name))) {
      rows.push({ name: f.name, label: f.label, value: 'hidden', hidden: true });
    } else if (Object.hasOwn(content, f.name)) {
      rows.push({ name: f.name, label: f.label, value: valueText(f, content[f.name]), hidden: false });
    }
  }
  for (const name of Object.keys(content)) {
    if (known.has(name)) continue;
    const hide = hidden.has(name);
    rows.push({ name, label: name, value: hide ? 'hidden' : valueText(null, content[name]), hidden: hide });
  }
  for (const name of hidden) {
    if (!known.has(name) && !Object.hasOwn(content, name)) rows.push({ name, label: name, value: 'hidden', hidden: true });
  }
  return { verdict: 'Answered', rows };
}

/** The box's heading for a question that has no tool call of its own: the form's title, or what a link is. */
export function questionTitle(question) {
  if (question?.mode === 'url') return 'A link to open';
  const t = question?.requestedSchema?.title;
  return typeof t === 'string' && t ? t : 'A question';
}
