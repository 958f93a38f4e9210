// Projects and a thread's changes, in words and shapes: node --test src/test/js
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  projectsFor, pickedProject, newThreadFields, projectLine, hasChanges, unquote, splitPatch, patchRows, filesWithDiffs,
  fileCounts, countsText, defaultCommitMessage, actionLine, actionLines, resultText, refusalText, discardQuestion, keepQuestion, clock,
  pendingWork, leaveQuestion, deleteQuestion, sessionTitle, whenText, sessionsNote,
} from '../../../webroot/js/projects.js';

const projects = [
  { id: 'web', name: 'web-app', worktrees: 'perThread', agents: [] },
  { id: 'ops', name: 'Ops', worktrees: 'shared', agents: ['claude'] },
];

// What `git diff --cached -M HEAD` wrote for a change, a binary file, an empty new file, a deletion,
// a rename, a name with a space and one git quotes.
const PATCH = "diff --git a/README.md b/README.md\nindex de98044..7be73ce 100644\n--- a/README.md\n+++ b/README.md\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\ndiff --git a/bin.dat b/bin.dat\nnew file mode 100644\nindex 0000000..bdc955b\nBinary files /dev/null and b/bin.dat differ\ndiff --git a/empty.txt b/empty.txt\nnew file mode 100644\nindex 0000000..e69de29\ndiff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\nindex 3367afd..0000000\n--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-old\ndiff --git a/move.txt b/moved.txt\nsimilarity index 100%\nrename from move.txt\nrename to moved.txt\ndiff --git a/with space.md b/with space.md\nnew file mode 100644\nindex 0000000..587be6b\n--- /dev/null\n+++ b/with space.md\t\n@@ -0,0 +1 @@\n+x\ndiff --git \"a/\\303\\244.md\" \"b/\\303\\244.md\"\nnew file mode 100644\nindex 0000000..975fbec\n--- /dev/null\n+++ \"b/\\303\\244.md\"\n@@ -0,0 +1 @@\n+y\n";

test('a project lists only for the agents it allows; none named means every agent', () => {
  assert.deepEqual(projectsFor(projects, 'demo').map((p) => p.id), ['web']);
  assert.deepEqual(projectsFor(projects, 'claude').map((p) => p.id), ['web', 'ops']);
  assert.deepEqual(projectsFor(undefined, 'demo'), []);
});

test('the picker keeps the person\'s choice while allowed, else the default project, else the scratch folder', () => {
  assert.equal(pickedProject(projects, 'demo', null, 'web'), 'web');
  assert.equal(pickedProject(projects, 'claude', 'ops', 'web'), 'ops');
  assert.equal(pickedProject(projects, 'demo', 'ops', 'web'), 'web', 'ops does not take demo');
  assert.equal(pickedProject(projects, 'demo', 'ops', 'ops'), '', 'the default does not take demo either');
  assert.equal(pickedProject(projects, 'demo', '', 'web'), '', 'a scratch folder chosen stays chosen');
  assert.equal(pickedProject(projects, 'demo', null, null), '');
});

test('a new thread names its project and, for a worktree per thread, a branch typed; without projects nothing', () => {
  assert.deepEqual(newThreadFields([], 'web', 'x'), {});
  assert.deepEqual(newThreadFields(projects, 'web', '  feature/login '), { project: 'web', branch: 'feature/login' });
  assert.deepEqual(newThreadFields(projects, 'web', '   '), { project: 'web' });
  assert.deepEqual(newThreadFields(projects, 'ops', 'x'), { project: 'ops' }, 'a shared project has no branch of its own');
  assert.deepEqual(newThreadFields(projects, '', 'x'), { project: '' }, 'the scratch folder');
});

test('the thread header names the project and branch; a Changes button only for an active worktree', () => {
  const info = { threadId: 't', project: 'web', branch: 'switchboard/abc12345', baseRef: 'main', worktree: 'active' };
  assert.equal(projectLine(projects, info), 'web-app \u00b7 switchboard/abc12345');
  assert.equal(projectLine(projects, { project: 'ops', branch: null }), 'Ops');
  assert.equal(projectLine(projects, { project: 'gone', branch: 'b' }), 'gone \u00b7 b', 'a project no longer configured: its id');
  assert.equal(projectLine(projects, { ...info, worktree: 'discarded' }), 'web-app \u00b7 switchboard/abc12345 (discarded)');
  assert.equal(projectLine(projects, { threadId: 't' }), null);
  assert.equal(hasChanges(info), true);
  assert.equal(hasChanges({ ...info, worktree: 'discarded' }), false);
  assert.equal(hasChanges({ project: 'ops', branch: null, worktree: 'active' }), false);
  assert.equal(hasChanges(undefined), false);
});

test('git\'s quoted paths are read back', () => {
  assert.equal(unquote('"b/\\303\\244.md"'), 'b/\u00e4.md');
  assert.equal(unquote('"a\\"b\\\\c\\td"'), 'a"b\\c\td');
  assert.equal(unquote('plain name.md'), 'plain name.md');
});

test('a patch is cut per file at its diff --git lines, each with its path', () => {
  const files = splitPatch(PATCH);
  assert.deepEqual(files.map((f) => f.path),
    ['README.md', 'bin.dat', 'empty.txt', 'gone.txt', 'moved.txt', 'with space.md', '\u00e4.md']);
  assert.equal(files[4].from, 'move.txt');
  assert.equal(files[0].from, null);
  assert.ok(files.every((f) => f.text.startsWith('diff --git ')));
  assert.ok(files[0].text.endsWith(' c'), 'each file ends where the next begins');
  assert.ok(!files[6].text.endsWith('\n'));
  assert.deepEqual(splitPatch(''), []);
  assert.deepEqual(splitPatch(undefined), []);
});

test('a file\'s diff is drawn as rows like an agent\'s edit: added, removed, context, hunks and notes', () => {
  const [readme, bin, empty, gone, moved] = splitPatch(PATCH);
  assert.deepEqual(patchRows(readme.text), [
    { kind: 'hunk', text: '@@ -1,3 +1,3 @@' },
    { kind: null, text: '  a' },
    { kind: 'del', text: '- b' },
    { kind: 'add', text: '+ B' },
    { kind: null, text: '  c' },
  ]);
  assert.deepEqual(patchRows(bin.text).map((r) => r.kind), ['meta', 'meta']);
  assert.match(patchRows(bin.text)[1].text, /^Binary files/);
  assert.deepEqual(patchRows(empty.text), [{ kind: 'meta', text: 'new file mode 100644' }]);
  assert.deepEqual(patchRows(gone.text).map((r) => r.kind), ['meta', 'hunk', 'del']);
  assert.deepEqual(patchRows(moved.text).map((r) => r.text), ['similarity index 100%', 'rename from move.txt', 'rename to moved.txt']);
  assert.deepEqual(patchRows('diff --git a/x b/x\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b').map((r) => r.kind),
    ['hunk', 'del', 'meta', 'add']);
  assert.deepEqual(patchRows('diff --git a/x b/x\n@@ -1,2 +1,2 @@\n \n-a\n+b\n').map((r) => r.kind),
    ['hunk', null, 'del', 'add'], 'an empty context line is a row; the patch\'s last newline is not');
});

test('each listed file gets its diff; one past a cut patch has none; a diff of a file not listed still shows', () => {
  const listed = [{ path: 'README.md', added: 1, removed: 1, binary: false }, { path: 'moved.txt', from: 'move.txt', added: 0, removed: 0, binary: false },
    { path: 'later.txt', added: 5, removed: 0, binary: false }];
  const cut = PATCH.slice(0, PATCH.indexOf('diff --git a/with space.md'));
  const out = filesWithDiffs(listed, cut);
  assert.deepEqual(out.map((f) => f.path), ['README.md', 'moved.txt', 'later.txt', 'bin.dat', 'empty.txt', 'gone.txt']);
  assert.match(out[0].diff, /^diff --git a\/README.md/);
  assert.match(out[1].diff, /rename to moved.txt/);
  assert.equal(out[2].diff, null);
  assert.equal(out[3].added, null);
  assert.deepEqual(filesWithDiffs([], ''), []);
});

test('the counts say commits ahead and files not committed, in words', () => {
  assert.equal(countsText({ ahead: 2, uncommitted: 1, baseRef: 'main' }), '2 commits ahead of main \u00b7 1 file not committed');
  assert.equal(countsText({ ahead: 1, uncommitted: 0, baseRef: 'dev' }), '1 commit ahead of dev \u00b7 nothing left to commit');
  assert.equal(countsText({ ahead: 0, uncommitted: 3, baseRef: 'main' }), 'no commits ahead of main \u00b7 3 files not committed');
  assert.equal(countsText({ ahead: 0, uncommitted: 100000, baseRef: 'main', filesTotal: 100000, filesOmitted: 99000 }),
    'no commits ahead of main \u00b7 100000 files not committed \u00b7 99000 more files not listed (of 100000)');
  assert.equal(fileCounts({ added: 3, removed: 1, binary: false }), '+3 \u22121');
  assert.equal(fileCounts({ added: 0, removed: 0, binary: true }), 'binary');
  assert.equal(fileCounts({ added: null }), '');
});

test('the default commit message names the thread', () => {
  assert.equal(defaultCommitMessage('water the plants'), 'Work from thread "water the plants"');
  assert.equal(defaultCommitMessage(null), 'Work from thread');
});

test('the project audit says what was done, by whom, when and as what, newest first', () => {
  const at = Date.UTC(2025, 0, 2, 10, 2);
  const fixed = () => '10:02';
  const merge = { at, action: 'merge', surface: 'web', user: null,
    detail: { commit: '1a2b3c4d5e6f', branch: 'switchboard/abc', baseRef: 'main', squash: true } };
  assert.equal(actionLine(merge, fixed), 'merged into main by web at 10:02 as 1a2b3c4');
  assert.equal(actionLine({ at, action: 'commit', surface: 'telegram', user: 'alice', detail: { commit: 'ffffeeee11' } }, fixed),
    'committed by alice on telegram at 10:02 as ffffeee');
  assert.equal(actionLine({ at, action: 'discard', surface: 'web', detail: { archive: 'refs/switchboard/archive/t1' } }, fixed),
    'discarded by web at 10:02; kept under refs/switchboard/archive/t1');
  assert.equal(actionLine({ at, action: 'discard', surface: 'web', detail: { archive: null } }, fixed),
    'discarded by web at 10:02; there was no work to keep');
  assert.equal(actionLine({ ...merge, detail: { ...merge.detail, squash: false } }, fixed),
    'merged into main by web at 10:02 as 1a2b3c4 (a merge commit)');
  const lines = actionLines([{ ...merge, at: 1, action: 'commit' }, merge], fixed);
  assert.match(lines[0], /^merged/);
  assert.match(lines[1], /^committed/);
  assert.deepEqual(actionLines(undefined), []);
  assert.match(clock(at), /^\d\d:\d\d$/);
});

test('what an action did and why one was refused, in words', () => {
  assert.equal(resultText('commit', { commit: 'abcdef0123' }), 'Committed as abcdef0.');
  assert.equal(resultText('merge', { commit: '1a2b3c4d', baseRef: 'main', squash: true }), 'Merged into main as 1a2b3c4 (one squashed commit).');
  assert.equal(resultText('merge', { commit: '1a2b3c4d', baseRef: 'main', squash: false }), 'Merged into main as 1a2b3c4 (a merge commit).');
  assert.match(resultText('discard', { archive: 'refs/switchboard/archive/t2' }), /kept under refs\/switchboard\/archive\/t2/);
  assert.match(resultText('discard', { archive: null }), /no work to keep/);
  assert.equal(resultText('keep', { branch: 'my-work', committed: 'fedcba9876' }), 'Kept on branch my-work (what '
    + 'was not committed is committed as fedcba9), not merged; the worktree is removed and the thread archived.');
  assert.match(resultText('keep', { branch: 'my-work', committed: null }), /^Kept on branch my-work, not merged/);
  assert.match(keepQuestion('a try', 'my-work'), /on its branch my-work, without merging it\?/);
  assert.equal(refusalText('merge', { code: 'conflict', message: 'merging a into main would conflict in README.md; nothing was merged (bring the thread up to date first)' }),
    'Not merged: merging a into main would conflict in README.md; nothing was merged (bring the thread up to date first)');
  assert.equal(refusalText('commit', { code: 'busy', message: 'the agent is at work' }), 'Not committed: the agent is at work.');
  assert.equal(refusalText('changes', { code: 'unavailable' }), 'Could not read the changes: unavailable.');
});

test('a discard asks first, saying where the work is kept', () => {
  const q = discardQuestion('water the plants', 'switchboard/abc', 't2');
  assert.match(q, /water the plants/);
  assert.match(q, /switchboard\/abc/);
  assert.match(q, /refs\/switchboard\/archive\/t2/);
});

test('what a worktree holds that is not on its base branch, in words', () => {
  assert.equal(pendingWork({ uncommitted: 2, ahead: 1, baseRef: 'main' }), '2 files not committed and 1 commit not merged into main');
  assert.equal(pendingWork({ uncommitted: 1, ahead: 0, baseRef: 'main' }), '1 file not committed');
  assert.equal(pendingWork({ uncommitted: 0, ahead: 3, baseRef: 'dev' }), '3 commits not merged into dev');
  assert.equal(pendingWork({ uncommitted: 0, ahead: 0, baseRef: 'main' }), null);
  assert.equal(pendingWork(null), null);
});

test('archiving a thread with work asks first; with none it just goes', () => {
  const t = { threadId: 't7', title: 'notes' };
  assert.equal(leaveQuestion('archive', t, { uncommitted: 2, ahead: 1, baseRef: 'main' }),
    'This thread has 2 files not committed and 1 commit not merged into main. Archive it anyway? Its worktree is kept; '
    + 'Discard in Changes throws the work away (kept under refs/switchboard/archive/t7).');
  assert.equal(leaveQuestion('archive', t, { uncommitted: 0, ahead: 0, baseRef: 'main' }), null);
  const unknown = leaveQuestion('archive', t, null, { code: 'internal', message: 'git failed.' });
  assert.match(unknown, /^Its work could not be checked \(git failed\): it may have files not committed/);
  assert.match(unknown, /Archive \u201cnotes\u201d anyway\?/);
  assert.match(leaveQuestion('archive', { threadId: 'x' }, null, null), /\(no answer\).*\u201cthis thread\u201d/);
});

test('deleting a worktree thread says its worktree is discarded and where the work is kept', () => {
  const t = { threadId: 't7', title: 'notes' };
  const q = leaveQuestion('delete', t, { uncommitted: 1, ahead: 0, baseRef: 'main' });
  assert.match(q, /^This thread has 1 file not committed\. Delete it for good anyway\?/);
  assert.match(q, /discards its worktree and its branch; the work is kept in the repository under refs\/switchboard\/archive\/t7\./);
  assert.match(q, /the permission audit keeps its requests/);
  const clean = leaveQuestion('delete', t, { uncommitted: 0, ahead: 0, baseRef: 'main' });
  assert.match(clean, /^Delete \u201cnotes\u201d for good\? Its worktree and its branch are removed/);
  assert.match(leaveQuestion('delete', t, null, { code: 'timeout' }), /\(timeout\).*refs\/switchboard\/archive\/t7/);
  assert.equal(deleteQuestion('a'), 'Delete \u201ca\u201d for good? Its conversation and its workspace files are removed; '
    + 'the permission audit keeps its requests.');
  assert.match(deleteQuestion(null), /\u201cthis thread\u201d/);
});

test('a listed session: its title, or (untitled); when it was updated, short', () => {
  assert.equal(sessionTitle({ title: 'Fix the login bug' }), 'Fix the login bug');
  assert.equal(sessionTitle({ title: null }), '(untitled)');
  assert.equal(sessionTitle({ title: '  ' }), '(untitled)');
  const now = new Date(2026, 11, 10, 12, 0).getTime();
  const at = (...a) => new Date(...a).toISOString();
  assert.equal(whenText(at(2026, 11, 10, 11, 59, 30), now), 'just now');
  assert.equal(whenText(at(2026, 11, 10, 11, 15), now), '45 min ago');
  assert.equal(whenText(at(2026, 11, 10, 2, 0), now), '10 h ago');
  assert.equal(whenText(at(2026, 11, 9, 9, 0), now), 'yesterday');
  assert.equal(whenText(at(2026, 11, 9, 23, 0), now), 'yesterday', '13 hours ago, but the day before');
  assert.equal(whenText(at(2026, 11, 8, 16, 0), now), '2 days ago', 'less than 48 hours, two days before');
  assert.equal(whenText(at(2026, 11, 6, 12, 0), now), '4 days ago');
  assert.equal(whenText(at(2026, 11, 3, 12, 0), now), '3 Dec', 'a week ago: its date');
  assert.equal(whenText(at(2026, 10, 30, 16, 0), now), '30 Nov');
  assert.equal(whenText(at(2025, 0, 3, 16, 0), now), '3 Jan 2025');
  assert.equal(whenText(at(2027, 0, 3, 16, 0), now), '3 Jan 2027', 'a time ahead of this clock: its date');
  assert.equal(whenText(null, now), '');
  assert.equal(whenText('not a time', now), '');
});

test('the sessions list says what it waits for, what the agent cannot do and what went wrong', () => {
  const l = (more) => ({ agent: 'lister', project: 'app', asked: null, more: false, list: [], supported: null,
    nextCursor: null, error: null, ...more });
  assert.equal(sessionsNote(null, 'Lister', 'App'), null);
  assert.match(sessionsNote(l({ asked: 's1' }), 'Lister', 'App').text, /^Asking Lister which sessions were begun in App/);
  assert.deepEqual(sessionsNote(l({ supported: false }), 'Demo agent', 'App'),
    { text: 'This agent does not list its sessions.', error: false });
  assert.equal(sessionsNote(l({ supported: true }), 'Lister', 'App').text, 'Lister has no sessions begun in App.');
  assert.match(sessionsNote(l({ supported: true, list: [{ sessionId: 'a' }] }), 'Lister', 'App').text, /^Begun in App/);
  assert.deepEqual(sessionsNote(l({ error: { code: 'unavailable', message: 'the agent did not start' } }), 'L', 'A'),
    { text: 'Could not list the sessions: the agent did not start.', error: true });
  assert.equal(sessionsNote(l({ asked: 's2', list: [{ sessionId: 'a' }], supported: true, more: true }), 'L', 'A').text,
    'Begun in A with L; choose one to continue it here:', 'loading more keeps the list as it is');
});
