// The new-thread form's project picker, when the gateway has projects: the projects the chosen agent
// may run in (the default one first chosen), a scratch folder, and for a project with a worktree per
// thread an optional branch name. Without projects it stays hidden and a new thread is asked for as
// it always was. A thread started in a project may take a while (its worktree is made first): the
// form says so, and says in words why the gateway refused one.
import { $, el, toast } from './dom.js';
import { store } from './state.js';
import { newThreadFields, perThread, pickedProject, projectName, projectsFor } from './projects.js';

let chosen = null; // the person's own choice, kept across agents and reconnects (null: none yet)
let starting = null; // the clientRef of a new_thread asked in a project, until its answer

export function renderPicker() {
  const { projects, defaultProject } = store.state;
  const some = projects.length > 0;
  $('project-select').hidden = $('project-label').hidden = !some;
  if (!some) {
    $('branch-input').hidden = $('branch-label').hidden = true;
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
  const show = perThread(store.state.projects, $('project-select').value);
  $('branch-input').hidden = $('branch-label').hidden = !show;
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
}

// What a new_thread frame adds for the picker (nothing without projects); `clientRef` is the frame's.
export function pickerFields(clientRef) {
  const fields = newThreadFields(store.state.projects, $('project-select').value, $('branch-input').value);
  if (fields.project) {
    starting = clientRef;
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
  $('branch-input').value = '';
}

// The gateway refused the thread asked for here in a project: said under the form (true).
export function threadRefused(f) {
  if (f.clientRef == null || f.clientRef !== starting) return false;
  starting = null;
  waiting(false);
  const text = 'No thread started: ' + (f.message || f.code);
  say(text, true);
  if ($('sidebar').inert) toast(text); // a phone with the menu closed would not see it
  return true;
}

// The socket went down: an answer may never come.
export function startingLost() {
  if (starting == null) return;
  starting = null;
  waiting(false);
  say(null);
}
