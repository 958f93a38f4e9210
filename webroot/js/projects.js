// Projects and a thread's changes in words and shapes: which projects an agent may start in, what a
// thread's header says of its project, a patch cut per file and drawn as rows, and what a commit,
// merge or discard did. Pure functions, no DOM (Node's tests import this module).
import { answeredBy } from './format.js';

// ---- the project picker and the thread header ----

// The projects a thread of `agentId` may start in (a project with no `agents` takes every agent).
export const projectsFor = (projects, agentId) => (projects || [])
  .filter((p) => !Array.isArray(p.agents) || p.agents.length === 0 || p.agents.includes(agentId));

export const projectName = (projects, id) => ((projects || []).find((p) => p.id === id) || { name: id }).name;

// What the picker shows for `agentId`: the choice made before when it is still allowed, else the
// default project when it is, else the scratch folder (""). `previous` null: nothing chosen yet.
export function pickedProject(projects, agentId, previous, defaultProject) {
  const allowed = projectsFor(projects, agentId);
  if (previous === '' || (previous && allowed.some((p) => p.id === previous))) return previous;
  return allowed.some((p) => p.id === defaultProject) ? defaultProject : '';
}

// Whether a thread of this project gets a branch of its own (so a branch name may be chosen).
export const perThread = (projects, id) => (projects || []).some((p) => p.id === id && p.worktrees === 'perThread');

// What a new_thread frame adds for the picker's choice: nothing when the gateway has no projects (the
// page asks as it always did); else the project ("" is a scratch folder) and, for a project with a
// worktree per thread, the branch name when one was typed.
export function newThreadFields(projects, project, branch) {
  if (!projects || projects.length === 0) return {};
  const fields = { project: project || '' };
  const name = (branch || '').trim();
  if (name && perThread(projects, project)) fields.branch = name;
  return fields;
}

// What the thread header says of a thread's project: "web-app · switchboard/abc12345", or null.
export function projectLine(projects, info) {
  if (!info || !info.project) return null;
  let text = projectName(projects, info.project);
  if (info.branch) text += ' \u00b7 ' + info.branch;
  if (info.worktree === 'discarded') text += ' (discarded)';
  if (info.worktree === 'kept') text += ' (kept, not merged)';
  return text;
}

// Whether a thread has work to review, commit, merge or discard: a branch of its own, not discarded.
export const hasChanges = (info) => !!info && !!info.branch && info.worktree === 'active';

// ---- a patch, per file ----

// A path as git writes it in a diff: C-quoted ("\"sp\\303\\244ce.md\"") when it has odd characters.
export function unquote(path) {
  if (!/^".*"$/.test(path)) return path;
  const bytes = [];
  const body = path.slice(1, -1);
  const escapes = { n: 10, t: 9, r: 13, b: 8, f: 12, v: 11, a: 7, '"': 34, '\\': 92 };
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === '\\' && i + 1 < body.length) {
      const next = body[i + 1];
      if (/[0-7]/.test(next)) {
        const oct = /^[0-7]{1,3}/.exec(body.slice(i + 1))[0];
        bytes.push(parseInt(oct, 8));
        i += oct.length;
        continue;
      }
      if (Object.hasOwn(escapes, next)) { bytes.push(escapes[next]); i++; continue; }
    }
    for (const b of new TextEncoder().encode(c)) bytes.push(b);
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}

// "a/x" or "b/x" as git writes a side of a diff (quoted or not), without its prefix; /dev/null is null.
function side(text, prefix) {
  const path = unquote(text.replace(/\t$/, ''));
  if (path === '/dev/null') return null;
  return path.startsWith(prefix) ? path.slice(prefix.length) : path;
}

// The path (and, for a rename, the path before) one file's diff is about.
function pathsOf(lines) {
  let path = null;
  let from = null;
  let old = null;
  for (const line of lines) {
    if (line.startsWith('@@')) break;
    if (line.startsWith('rename to ')) path = unquote(line.slice(10));
    else if (line.startsWith('rename from ')) from = unquote(line.slice(12));
    else if (line.startsWith('+++ ')) path = path ?? side(line.slice(4), 'b/');
    else if (line.startsWith('--- ')) old = side(line.slice(4), 'a/');
  }
  if (!path && old) path = old; // a deleted file: +++ /dev/null
  if (!path) {
    // No ---/+++ lines (an empty file, a mode change, a binary file): the header's two halves are one path.
    const header = lines[0].slice('diff --git '.length);
    const quoted = /^("(?:[^"\\]|\\.)*") ("(?:[^"\\]|\\.)*")$/.exec(header);
    if (quoted) path = side(quoted[2], 'b/');
    else if (header.length % 2 === 1) {
      const half = (header.length - 1) / 2;
      if (header[half] === ' ' && header.slice(2, half) === header.slice(half + 3)) path = header.slice(half + 3);
    }
    if (!path) {
      const bSide = header.lastIndexOf(' b/');
      path = bSide >= 0 ? header.slice(bSide + 3) : header;
    }
  }
  return { path, from };
}

// A unified diff of several files cut at each "diff --git" line: [{path, from, text}] in its order
// (from: the path before a rename, else null). Text before the first such line is no file's.
export function splitPatch(patch) {
  const out = [];
  let lines = null;
  const flush = () => {
    if (lines) out.push({ ...pathsOf(lines), text: lines.join('\n') });
  };
  for (const line of (patch || '').split('\n')) {
    if (line.startsWith('diff --git ')) {
      flush();
      lines = [line];
    } else if (lines) {
      lines.push(line);
    }
  }
  flush();
  if (out.length) {
    const last = out[out.length - 1];
    last.text = last.text.replace(/\n$/, '');
  }
  return out;
}

// One file's diff as rows the page draws like an agent's proposed edit: {kind, text}, kind 'add',
// 'del', 'hunk' (an @@ line), 'meta' (a new, deleted, renamed or binary file) or null (context).
export function patchRows(text) {
  const rows = [];
  let inHunk = false;
  for (const line of (text || '').split('\n')) {
    if (line.startsWith('@@')) { inHunk = true; rows.push({ kind: 'hunk', text: line }); continue; }
    if (!inHunk) {
      if (/^(new file mode|deleted file mode|rename from|rename to|old mode|new mode|similarity index|Binary files)/
        .test(line)) {
        rows.push({ kind: 'meta', text: line });
      }
      continue; // diff --git, index, --- and +++ lines: the file's name says it already
    }
    if (line.startsWith('+')) rows.push({ kind: 'add', text: '+ ' + line.slice(1) });
    else if (line.startsWith('-')) rows.push({ kind: 'del', text: '- ' + line.slice(1) });
    else if (line.startsWith('\\')) rows.push({ kind: 'meta', text: line });
    else if (line !== '') rows.push({ kind: null, text: '  ' + line.slice(1) }); // an empty context line is " "
  }
  return rows;
}

// The changed files, each with its diff (null when the patch has none: it was cut short), in the
// gateway's order; a diff of a file the list does not name comes after, so nothing is left out.
export function filesWithDiffs(files, patch) {
  const diffs = splitPatch(patch);
  const used = new Set();
  const out = (files || []).map((f) => {
    const i = diffs.findIndex((d, j) => !used.has(j) && d.path === f.path);
    if (i >= 0) used.add(i);
    return { ...f, diff: i >= 0 ? diffs[i].text : null };
  });
  diffs.forEach((d, j) => {
    if (!used.has(j)) out.push({ path: d.path, from: d.from || undefined, added: null, removed: null, binary: false, diff: d.text });
  });
  return out;
}

// ---- what the Changes view says ----

const plural = (n, one, many) => n + ' ' + (n === 1 ? one : many);

// "+3 −1", or "binary"; a file only the patch named says nothing.
export function fileCounts(f) {
  if (f.binary) return 'binary';
  if (typeof f.added !== 'number') return '';
  return '+' + f.added + ' \u2212' + f.removed;
}

// "2 commits ahead of main · 1 file not committed".
export function countsText(c) {
  const ahead = c.ahead ? plural(c.ahead, 'commit', 'commits') + ' ahead of ' + c.baseRef : 'no commits ahead of ' + c.baseRef;
  const pending = c.uncommitted ? plural(c.uncommitted, 'file', 'files') + ' not committed' : 'nothing left to commit';
  // The gateway lists the first files of a huge change and counts the rest.
  const omitted = c.filesOmitted > 0 ? ' \u00b7 ' + plural(c.filesOmitted, 'more file', 'more files') + ' not listed'
    + ' (of ' + c.filesTotal + ')' : '';
  return ahead + ' \u00b7 ' + pending + omitted;
}

export const shortSha = (sha) => (sha ? String(sha).slice(0, 7) : '');

export const defaultCommitMessage = (title) => 'Work from thread' + (title ? ' "' + title + '"' : '');

const pad = (n) => String(n).padStart(2, '0');
export const clock = (ms) => {
  const t = new Date(ms);
  return pad(t.getHours()) + ':' + pad(t.getMinutes());
};

const PAST = { commit: 'committed', merge: 'merged', discard: 'discarded', keep: 'kept on its branch' };

// One line of a thread's project audit: "merged into main by web at 10:02 as 1a2b3c4".
export function actionLine(a, at = clock) {
  const d = a.detail || {};
  let text = PAST[a.action] || a.action;
  if (a.action === 'merge' && d.baseRef) text += ' into ' + d.baseRef;
  text += ' by ' + answeredBy({ surface: a.surface || 'someone', user: a.user }) + ' at ' + at(a.at);
  if (d.commit) text += ' as ' + shortSha(d.commit);
  if (a.action === 'merge' && d.squash === false) text += ' (a merge commit)';
  if (a.action === 'discard') text += d.archive ? '; kept under ' + d.archive : '; there was no work to keep';
  return text;
}

// The audit, newest first.
export const actionLines = (actions, at = clock) => [...(actions || [])]
  .sort((a, b) => (b.at || 0) - (a.at || 0)).map((a) => actionLine(a, at));

// What a commit, merge or discard did, as the panel says it.
export function resultText(action, result) {
  const r = result || {};
  switch (action) {
    case 'commit': return 'Committed as ' + shortSha(r.commit) + '.';
    case 'merge': return 'Merged into ' + (r.baseRef || r.thread?.baseRef || 'the base branch') + ' as ' + shortSha(r.commit)
      + (r.squash === false ? ' (a merge commit).' : ' (one squashed commit).');
    case 'keep': return 'Kept on branch ' + (r.branch || 'its branch') + (r.committed ? ' (what was not committed is '
      + 'committed as ' + shortSha(r.committed) + ')' : '') + ', not merged; the worktree is removed and the thread '
      + 'archived.';
    case 'discard': return r.archive
      ? 'Discarded: the worktree and its branch are gone, the work is kept under ' + r.archive + '. The thread is archived.'
      : 'Discarded: there was no work to keep. The thread is archived.';
    default: return 'Done.';
  }
}

// What the gateway refused, as the panel says it: "Not merged: merging … would conflict in README.md; …".
export function refusalText(action, error) {
  const lead = { commit: 'Not committed', merge: 'Not merged', discard: 'Not discarded', keep: 'Not kept',
    changes: 'Could not read the changes' }[action]
    || 'Refused';
  const why = (error && (error.message || error.code)) || 'no reason given';
  return lead + ': ' + why + (/[.!?)]$/.test(why) ? '' : '.');
}

// What runs while the panel waits for the gateway.
export const workingText = (action) => ({ commit: 'Committing…', merge: 'Merging…', discard: 'Discarding…',
  keep: 'Keeping the branch…' }[action]
  || 'Reading the changes…');

// ---- leaving a thread with work in its worktree ----

// What a thread's worktree holds that is not on its base branch: "2 files not committed and 1 commit
// not merged into main", or null when there is nothing (a changes frame's counts).
export function pendingWork(c) {
  if (!c) return null;
  const parts = [];
  if (c.uncommitted > 0) parts.push(plural(c.uncommitted, 'file', 'files') + ' not committed');
  if (c.ahead > 0) parts.push(plural(c.ahead, 'commit', 'commits') + ' not merged into ' + (c.baseRef || 'its base branch'));
  return parts.length ? parts.join(' and ') : null;
}

const quoted = (title) => '\u201c' + (title || 'this thread') + '\u201d';
const FOR_GOOD = ' Its conversation is removed; the permission audit keeps its requests.';

// The question a delete asks first, of a thread without a worktree of its own.
export const deleteQuestion = (title) => 'Delete ' + quoted(title) + ' for good? Its conversation and its workspace '
  + 'files are removed; the permission audit keeps its requests.';

// The question archiving or deleting (`action`) a thread with a worktree asks first, from its changes
// frame (`changes`), or, when those could not be read, from what went wrong (`error`, a {code, message}).
// null: nothing to ask (an archive that leaves no work behind). `t`: {threadId, title}.
export function leaveQuestion(action, t, changes, error) {
  const kept = 'refs/switchboard/archive/' + t.threadId;
  const archiveTail = ' Its worktree is kept; Discard in Changes throws the work away (kept under ' + kept + ').';
  const deleteTail = ' Deleting it discards its worktree and its branch; the work is kept in the repository under '
    + kept + '.' + FOR_GOOD;
  if (!changes) {
    const why = (error && (error.message || error.code)) || 'no answer';
    const lead = 'Its work could not be checked (' + why.replace(/[.]$/, '') + '): it may have files not committed '
      + 'or commits not merged. ';
    return action === 'archive' ? lead + 'Archive ' + quoted(t.title) + ' anyway?' + archiveTail
      : lead + 'Delete ' + quoted(t.title) + ' for good anyway?' + deleteTail;
  }
  const pending = pendingWork(changes);
  if (!pending) {
    return action === 'archive' ? null : 'Delete ' + quoted(t.title) + ' for good? Its worktree and its branch are '
      + 'removed: nothing in them is left to commit or merge.' + FOR_GOOD;
  }
  return action === 'archive' ? 'This thread has ' + pending + '. Archive it anyway?' + archiveTail
    : 'This thread has ' + pending + '. Delete it for good anyway?' + deleteTail;
}

// ---- sessions begun elsewhere (the picker's "Continue a session") ----

export const sessionTitle = (s) => (s && typeof s.title === 'string' && s.title.trim() ? s.title.trim() : '(untitled)');

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

// When a session was last updated, short: "just now", "5 min ago", "3 h ago", "yesterday", "4 days
// ago", else its date ("1 Dec", with its year when not this year's); "" when unknown or not a time.
export function whenText(iso, now = Date.now()) {
  if (typeof iso !== 'string' || !iso) return '';
  const t = new Date(iso);
  const ms = t.getTime();
  if (Number.isNaN(ms)) return '';
  const ago = now - ms;
  if (Math.abs(ago) < 60000) return 'just now';
  if (ago > 0 && ago < 3600000) return Math.floor(ago / 60000) + ' min ago';
  const today = new Date(now);
  // Calendar days between the two (local midnights; rounded, as a day with a clock change is not 24 h).
  const days = Math.round((new Date(today.getFullYear(), today.getMonth(), today.getDate())
    - new Date(t.getFullYear(), t.getMonth(), t.getDate())) / 86400000);
  if (ago > 0 && days === 0) return Math.floor(ago / 3600000) + ' h ago';
  if (days === 1) return 'yesterday';
  if (days > 1 && days < 7) return days + ' days ago';
  const date = t.getDate() + ' ' + MONTHS[t.getMonth()];
  return t.getFullYear() === today.getFullYear() ? date : date + ' ' + t.getFullYear();
}

// What the sessions list says above its entries: {text, error}, or null (nothing to say). `l` is
// the store's `sessions` (store.js); `agent` and `project` are names.
export function sessionsNote(l, agent, project) {
  if (!l) return null;
  if (l.error) {
    const why = l.error.message || l.error.code || 'no reason given';
    return { text: 'Could not list the sessions: ' + why + (/[.!?)]$/.test(why) ? '' : '.'), error: true };
  }
  if (l.asked && !l.list.length) {
    return { text: 'Asking ' + agent + ' which sessions were begun in ' + project + '\u2026 (it is started to answer: '
      + 'this may take a few seconds)', error: false };
  }
  if (l.supported === false) return { text: 'This agent does not list its sessions.', error: false };
  if (l.supported == null) return null;
  if (!l.list.length) return { text: agent + ' has no sessions begun in ' + project + '.', error: false };
  return { text: 'Begun in ' + project + ' with ' + agent + '; choose one to continue it here:', error: false };
}

// The question keeping a thread's branch asks first.
export function keepQuestion(title, branch) {
  return 'Keep the work of \u201c' + (title || 'this thread') + '\u201d on its branch ' + branch + ', without merging '
    + 'it? What is not committed is committed there; the worktree is removed and the thread archived. The branch '
    + 'stays in the repository for you.';
}

// The question a discard asks first.
export function discardQuestion(title, branch, threadId) {
  return 'Discard the work of \u201c' + (title || 'this thread') + '\u201d? Its worktree and its branch ' + branch
    + ' are removed and the thread is archived. Nothing is lost: everything, files not committed too, is kept in '
    + 'the repository under refs/switchboard/archive/' + threadId + '.';
}
