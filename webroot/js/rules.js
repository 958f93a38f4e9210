// Rules in words, for the page: a request a rule answered, the chooser that turns a card's "always"
// into a grant the gateway keeps (and can take back), and the Rules view's lines. Pure functions, no
// DOM (Node's tests import this module). The gateway decides and re-checks everything said here.
import { clockTime } from './countdown.js';
import { shortPath } from './format.js';

// A grant is a rule a person's "always" made: the only kind the page may revoke.
export const isGrant = (ruleId) => typeof ruleId === 'string' && ruleId.startsWith('g_');

// The line a permission_auto frame draws instead of a card: "✅ Allowed by rule notes", what matched,
// and whether it can be taken back here.
export function autoAnswer(f) {
  const o = (f && f.outcome) || {};
  const rule = (f && f.rule) || o.rule || {};
  const allowed = typeof o.kind === 'string' && o.kind.startsWith('allow');
  const id = rule.ruleId || (o.answeredBy && o.answeredBy.user) || 'unknown';
  return {
    allowed,
    ruleId: rule.ruleId || null,
    text: (allowed ? '\u2705 Allowed' : '\u26d4 Refused') + ' by rule ' + id,
    matched: typeof rule.matched === 'string' ? rule.matched : '',
    revocable: isGrant(rule.ruleId),
  };
}

const SHELLS = ['sh', 'bash', 'zsh', 'dash', '/bin/sh', '/bin/bash', '/usr/bin/bash', '/bin/zsh', '/usr/bin/zsh'];

// The words of the command a tool call runs, read as the gateway reads rawInput.command: a string
// split on whitespace (for choosing only: the gateway splits it strictly and refuses what is not one
// plain command), an argv array as it is, and a shell's `-c` script as its own command line. Null
// when there is no command to narrow.
export function commandWords(rawInput) {
  const c = rawInput && typeof rawInput === 'object' ? rawInput.command : undefined;
  if (typeof c === 'string') {
    const words = c.trim().split(/\s+/).filter(Boolean);
    return words.length ? words : null;
  }
  if (!Array.isArray(c) || !c.length || !c.every((w) => typeof w === 'string' && w)) return null;
  if (SHELLS.includes(c[0])) {
    return c.length === 3 && (c[1] === '-c' || c[1] === '-lc') ? commandWords({ command: c[2] }) : null;
  }
  return [...c];
}

// How far a grant may reach from this thread: a project only when the thread has one.
export const reaches = (thread) => ['thread', ...(thread && thread.project ? ['project'] : []), 'agent'];

// How long it may live: "while this thread lasts" only for a grant kept to this thread.
export const lives = (reach) => (reach === 'thread' ? ['thread', 'day', 'forever'] : ['day', 'forever']);

export const REACH_WORDS = { thread: 'this thread', project: 'this project', agent: 'this agent' };
export const LIFE_WORDS = { thread: 'while this thread lasts', day: 'for a day', forever: 'until I revoke it' };

// Choices the gateway would take: a reach the thread offers, a life that reach allows, at least the
// first word kept. {reach, life, keep}: keep is how many of the command's first words (null: all).
export function settle(choices, thread, words) {
  const reach = reaches(thread).includes(choices.reach) ? choices.reach : 'thread';
  const life = lives(reach).includes(choices.life) ? choices.life : 'day';
  let keep = null;
  if (words && Number.isInteger(choices.keep)) keep = Math.min(Math.max(choices.keep, 1), words.length);
  return { reach, life, keep: keep === words?.length ? null : keep };
}

// The grant of a permission_answer: {reach, life, command?}, command only when words were left out.
export function grantOf(choices, words) {
  const grant = { reach: choices.reach, life: choices.life };
  if (words && Number.isInteger(choices.keep) && choices.keep < words.length) grant.command = words.slice(0, choices.keep);
  return grant;
}

const PATH_KEYS = ['file_path', 'path', 'notebook_path', 'abs_path', 'filePath', 'absolute_path'];

// What the tool call is, as narrow as the gateway's grant: the command's words kept, else the files
// it names, else the hosts it fetches (null: nothing a grant can key on).
function what(toolCall, words, keep) {
  const tc = toolCall || {};
  const kind = tc.kind || 'this tool call';
  if (words) return kind + ' `' + words.slice(0, keep || words.length).join(' ') + ' \u2026`';
  const raw = tc.rawInput && typeof tc.rawInput === 'object' ? tc.rawInput : {};
  const paths = new Set();
  for (const l of Array.isArray(tc.locations) ? tc.locations : []) if (l && typeof l.path === 'string') paths.add(l.path);
  for (const k of PATH_KEYS) if (typeof raw[k] === 'string') paths.add(raw[k]);
  if (paths.size) return kind + ' ' + [...paths].map(shortPath).join(', ');
  const hosts = ['url', 'uri'].map((k) => raw[k]).filter((u) => typeof u === 'string').map(hostOf).filter(Boolean);
  if (hosts.length) return kind + ' from ' + hosts.join(', ');
  return null; // never its title: the agent writes it, so the gateway keys no grant on it
}

// A command a shell would read as more than one plain command: the gateway grants none of those.
const NOT_PLAIN = /[;&|<>$`()\\\n\r*?[~{#!]/;

function hostOf(url) {
  try {
    return new URL(url).hostname;
  } catch {
    return null;
  }
}

// "Will allow: execute `git diff …` in this thread, while it lasts": what a grant with these
// choices allows. thread: {project, projectName, agentName} (names are optional).
export function grantPreview(choices, toolCall, thread) {
  const t = thread || {};
  const words = commandWords(toolCall && toolCall.rawInput);
  const where = {
    thread: 'in this thread',
    project: 'in project ' + (t.projectName || t.project || 'of this thread'),
    agent: 'for ' + (t.agentName || 'this agent') + ', in every thread',
  }[choices.reach] || 'in this thread';
  const life = { thread: 'while it lasts', day: 'for a day', forever: 'until you revoke it' }[choices.life] || 'for a day';
  const c = toolCall && toolCall.rawInput && toolCall.rawInput.command;
  if (typeof c === 'string' && NOT_PLAIN.test(c)) {
    return 'No \u201calways\u201d for this: `' + c.slice(0, 80) + '` is not one plain command. Answer it once.';
  }
  const covered = what(toolCall, words, choices.keep);
  if (!covered) return 'No \u201calways\u201d for this: it names no command, file or host the gateway can check. Answer it once.';
  return 'Will allow: ' + covered + ' ' + where + ', ' + life;
}

// How much a rule was used: "used 1 time, last at 14:32", "never used".
export function ruleUse(rule, now) {
  const n = Number(rule && rule.uses) || 0;
  if (!n) return 'never used';
  return 'used ' + n + (n === 1 ? ' time' : ' times')
    + (rule.lastUsedAt != null ? ', last at ' + clockTime(rule.lastUsedAt, now) : '');
}

const startOfDay = (ms) => { const d = new Date(ms); return new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime(); };

// A moment ahead, as near as it is: "14:00", "14:00 tomorrow", "Fri 14:00", "30 Mar 14:00".
function ahead(ms, now) {
  const days = Math.round((startOfDay(ms) - startOfDay(now)) / 86400000);
  const hm = clockTime(ms, ms); // the time of day alone
  if (days === 0) return hm;
  if (days === 1) return hm + ' tomorrow';
  return clockTime(ms, now);
}

// How long a rule lasts: "until 14:00 tomorrow", "expired at 09:12", "while its thread lasts",
// "until revoked"; null for a rule of the config (it lasts as long as the config has it).
export function ruleExpiry(rule, now) {
  if (!rule || rule.revokedAt != null) return null;
  if (rule.expiresAt != null) {
    return rule.expiresAt <= now ? 'expired at ' + clockTime(rule.expiresAt, now) : 'until ' + ahead(rule.expiresAt, now);
  }
  if (rule.source !== 'grant') return null;
  return rule.scope && typeof rule.scope === 'object' && rule.scope.thread ? 'while its thread lasts' : 'until revoked';
}

// Who took a rule back, and when: "revoked by web at 14:02"; the config's own leave it.
export function ruleRevoked(rule, now) {
  if (!rule || rule.revokedAt == null) return null;
  const by = rule.revokedBy === 'config' ? 'removed from the config' : 'revoked by ' + (rule.revokedBy || 'someone');
  return by + ' at ' + clockTime(rule.revokedAt, now);
}

// Who made it: "made by web at 14:02" for a grant; a rule of the config says where it comes from.
export function ruleMade(rule, now) {
  if (!rule) return '';
  if (rule.source !== 'grant') return rule.source === 'preset' ? 'a preset of the config' : 'from the config';
  return 'made by ' + (rule.createdBy || 'someone') + (rule.createdAt ? ' at ' + clockTime(rule.createdAt, now) : '');
}

export const SOURCE_WORDS = { config: 'config', preset: 'preset', grant: 'grant' };

// Whether a rule still answers: not revoked, not expired.
export const ruleActive = (rule, now) => !!rule && rule.revokedAt == null && (rule.expiresAt == null || rule.expiresAt > now);

// The Rules view's two lists: those in force (as the gateway ordered them, oldest first) and those
// that ended (newest end first), with the ended list's title.
export function ruleGroups(rules, now) {
  const all = Array.isArray(rules) ? rules.filter((r) => r && typeof r.ruleId === 'string') : [];
  const active = all.filter((r) => ruleActive(r, now));
  const endedAt = (r) => (r.revokedAt != null ? r.revokedAt : r.expiresAt);
  const ended = all.filter((r) => !ruleActive(r, now)).sort((a, b) => endedAt(b) - endedAt(a));
  const expired = ended.some((r) => r.revokedAt == null);
  return { active, ended, endedTitle: (expired ? 'Revoked or expired' : 'Revoked') + ' (' + ended.length + ')' };
}
