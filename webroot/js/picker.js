// The new-thread form's project picker, when the gateway has projects: the projects the chosen agent
// may run in (the default one first chosen), a scratch folder, and for a project with a worktree per
// thread an optional branch name. Without projects it stays hidden and a new thread is asked for as
// it always was. A thread started in a project may take a while (its worktree is made first): the
// form says so, and says in words why the gateway refused one.
//
// With a project chosen, "Continue a session…" lists the sessions the chosen agent keeps for that
// project's folder (begun in a terminal there): the agent is started to answer, so it may take a few
// seconds. Choosing one starts a thread on it (its history is the agent's replay) and opens it.
import { $, el, toast } from './dom.js';
import { store, dispatch } from './state.js';
import { sessionsAwait } from './store.js';
import { send } from './socket.js';
import { agentName } from './format.js';
import {
  newThreadFields, perThread, pickedProject, projectName, projectsFor, sessionTitle, sessionsNote, whenText,
} from './projects.js';

let chosen = null; // the person's own choice, kept across agents and reconnects (null: none yet)
let starting = null; // the clientRef of a new_thread asked in a project, until its answer
let fromSession = false; // whether that new_thread continues a session from the list
let refs = 0;

export function renderPicker() {
  const { projects, defaultProject } = store.state;
  const some = projects.length > 0;
  $('project-select').hidden = $('project-label').hidden = !some;
  if (!some) {
    $('branch-input').hidden = $('branch-label').hidden = true;
    $('continue').hidden = true;
    if (store.state.sessions) dispatch({ type: 'sessions_closed' });
    return;
  }
  const agent = $('agent-select').value;
  const value = pickedProject(projects, agent, chosen, defaultProject);
  const options = projectsFor(projects, agent).map((p) => {
    const o = el('option', null, p.name);
    o.value = p.id;
    return o;
  });
  const scratch = el('option', null, 'No project (scratch folder)');
  scratch.value = '';
  $('project-select').replaceChildren(...options, scratch);
  $('project-select').value = value;
  renderBranch();
}

function renderBranch() {
  const project = $('project-select').value;
  const show = perThread(store.state.projects, project);
  $('branch-input').hidden = $('branch-label').hidden = !show;
  $('continue').hidden = !project; // a session is continued in the folder it was begun in: a project's
  // The list is one agent's in one project: another choice closes it.
  const l = store.state.sessions;
  if (l && (l.agent !== $('agent-select').value || l.project !== project)) dispatch({ type: 'sessions_closed' });
}

$('project-select').addEventListener('change', () => {
  chosen = $('project-select').value;
  renderBranch();
  say(null);
});
$('agent-select').addEventListener('change', renderPicker);
$('branch-input').addEventListener('input', () => say(null));

function say(text, isError) {
  const p = $('new-thread-status');
  p.textContent = text || '';
  p.classList.toggle('error', !!isError);
  p.hidden = !text;
}

function waiting(on) {
  $('new-thread').querySelector('button[type=submit]').disabled = on;
  for (const b of $('sessions-list').querySelectorAll('button')) b.disabled = on;
  $('sessions-more').disabled = on || !!store.state.sessions?.asked;
}

// What a new_thread frame adds for the picker (nothing without projects); `clientRef` is the frame's.
export function pickerFields(clientRef) {
  const fields = newThreadFields(store.state.projects, $('project-select').value, $('branch-input').value);
  if (fields.project) {
    starting = clientRef;
    fromSession = false;
    waiting(true);
    say(perThread(store.state.projects, fields.project)
      ? 'Making a worktree in ' + projectName(store.state.projects, fields.project) + '\u2026'
      : 'Starting in ' + projectName(store.state.projects, fields.project) + '\u2026');
  } else {
    say(null);
  }
  return fields;
}

// The thread asked for here was made.
export function threadStarted(clientRef) {
  if (clientRef == null || clientRef !== starting) return;
  starting = null;
  waiting(false);
  say(null);
  if (fromSession) dispatch({ type: 'sessions_closed' }); // it is a thread now: open it from the list
  else $('branch-input').value = '';
  fromSession = false;
}

// The gateway refused the thread asked for here in a project: said under the form (true).
export function threadRefused(f) {
  if (f.clientRef == null || f.clientRef !== starting) return false;
  starting = null;
  fromSession = false;
  waiting(false);
  const text = 'No thread started: ' + (f.message || f.code);
  say(text, true);
  if ($('sidebar').inert) toast(text); // a phone with the menu closed would not see it
  return true;
}

// The socket went down: an answer may never come.
export function startingLost() {
  if (starting != null) {
    starting = null;
    fromSession = false;
    waiting(false);
    say(null);
  }
  dispatch({ type: 'sessions_lost', message: 'the connection to the gateway dropped before it answered; try again' });
}

// ---- sessions begun elsewhere ----

function askSessions(more) {
  const agent = $('agent-select').value;
  const project = $('project-select').value;
  if (!agent || !project) return;
  const clientRef = 'sessions-' + Date.now() + '-' + (++refs);
  const frame = { type: 'sessions', agent, project, clientRef };
  if (more) {
    const cursor = store.state.sessions?.nextCursor;
    if (!cursor) return;
    frame.cursor = cursor;
  }
  if (send(frame)) dispatch({ type: 'sessions_asked', agent, project, clientRef, more });
}

$('sessions-open').addEventListener('click', () => {
  if (store.state.sessions) dispatch({ type: 'sessions_closed' });
  else askSessions(false);
});
$('sessions-more').addEventListener('click', () => askSessions(true));

export function sessionsFrame(f) {
  dispatch({ type: 'sessions', frame: f });
}

// An error frame the sessions list waits for: said in the list (true), else not its own (false).
export function sessionsRefused(f) {
  if (!sessionsAwait(store.state, f.clientRef)) return false;
  dispatch({ type: 'sessions_refused', clientRef: f.clientRef, code: f.code, message: f.message });
  return true;
}

// Starts a thread on a listed session, opened once the gateway made it (threads.js opens a thread
// whose clientRef is the one awaited).
function continueSession(x) {
  const l = store.state.sessions;
  if (!l || starting != null) return;
  const clientRef = 'new-' + Date.now();
  const frame = { type: 'new_thread', agent: l.agent, project: l.project, session: x.sessionId, clientRef };
  const title = typeof x.title === 'string' ? x.title.trim() : '';
  if (title) frame.title = title;
  if (!$('node-select').hidden && $('node-select').value) frame.node = $('node-select').value;
  if (!send(frame)) return;
  dispatch({ type: 'thread_asked', clientRef });
  starting = clientRef;
  fromSession = true;
  waiting(true);
  say('Opening \u201c' + sessionTitle(x) + '\u201d in ' + projectName(store.state.projects, l.project)
    + '\u2026 (its agent starts and loads it)');
}

function sessionItem(x) {
  const li = el('li');
  const b = el('button', 'session');
  b.type = 'button';
  b.dataset.session = x.sessionId;
  b.disabled = starting != null;
  b.append(el('span', 'session-title', sessionTitle(x)));
  const when = whenText(x.updatedAt);
  if (when) {
    const w = el('span', 'session-when', 'updated ' + when);
    w.title = new Date(x.updatedAt).toLocaleString();
    b.append(w);
  }
  b.addEventListener('click', () => continueSession(x));
  li.append(b);
  return li;
}

store.subscribe((s, before) => {
  const l = s.sessions;
  const b = before.sessions;
  if (l === b) return;
  $('sessions').hidden = !l;
  $('sessions-open').setAttribute('aria-expanded', String(!!l));
  if (!l) {
    $('sessions-list').replaceChildren();
    return;
  }
  const note = sessionsNote(l, agentName(s.agents, l.agent), projectName(s.projects, l.project));
  $('sessions-note').textContent = note ? note.text : '';
  $('sessions-note').classList.toggle('error', !!note?.error);
  $('sessions-note').hidden = !note;
  if (!b || b.list !== l.list) $('sessions-list').replaceChildren(...l.list.map(sessionItem));
  $('sessions-more').hidden = !l.nextCursor;
  $('sessions-more').disabled = !!l.asked || starting != null;
  $('sessions-more').textContent = l.asked && l.more ? 'Loading more\u2026' : 'Load more';
});
