// The thread list in the sidebar (listed, and archived apart) and the count of waiting questions in
// the tab's title, kept up to date from the store. Rows are keyed by thread id: a change updates
// its own row in place instead of rebuilding the list (pending counts come up to five times a second).
import { $, el } from './dom.js';
import { store } from './state.js';
import { listChanged, threadRows, totalPending } from './store.js';
import { keyedList, setText } from './keyed.js';
import { send } from './socket.js';
import { titleWithCount } from './format.js';
import { leave } from './leaving.js';

// The button that opens a thread: its title, its project (when it has one), its agent, and a badge
// while questions wait.
function threadButton(open, id) {
  const b = el('button');
  const project = el('span', 'project');
  project.hidden = true;
  b.append(el('span', 'title'), project, el('span', 'agent'));
  b.addEventListener('click', () => open(id));
  return b;
}

function updateButton(b, row) {
  b.classList.toggle('current', row.current);
  setText(b.children[0], row.title);
  const project = b.children[1];
  b.classList.toggle('with-project', !!row.project);
  project.hidden = !row.project;
  setText(project, row.project || '');
  project.title = row.project ? 'Project ' + row.project : '';
  setText(b.children[2], row.agent);
}

function updateBadge(b, row) {
  let badge = b.querySelector('.pending');
  if (!row.pending) { badge?.remove(); return; }
  if (!badge) b.append(badge = el('span', 'pending'));
  setText(badge, String(row.pending));
  badge.title = row.pending + ' waiting for your answer';
}

// Shows the list and keeps it current; `open(threadId)` is what a click on a thread does.
export function mountThreadList(open) {
  const listed = keyedList($('threads'), (row) => {
    const li = el('li');
    li.append(threadButton(open, row.key));
    return li;
  }, (li, row) => {
    updateButton(li.firstChild, row);
    updateBadge(li.firstChild, row);
  });

  const archived = keyedList($('archived-threads'), (row) => {
    const li = el('li', 'archived-thread');
    const restore = el('button', 'restore', 'Restore');
    restore.type = 'button';
    restore.addEventListener('click', () => send({ type: 'archive_thread', threadId: row.key, archived: false }));
    const remove = el('button', 'delete', 'Delete');
    remove.type = 'button';
    remove.addEventListener('click', () => leave('delete', row.key)); // asks first, in words
    li.append(threadButton(open, row.key), restore, remove);
    return li;
  }, (li, row) => {
    updateButton(li.children[0], row);
    const named = store.state.threads.get(row.key)?.info.title || 'this thread';
    li.children[1].setAttribute('aria-label', 'Restore ' + named);
    li.children[2].setAttribute('aria-label', 'Delete ' + named + ' for good');
  });

  store.subscribe((s, before) => {
    if (listChanged(before, s)) {
      const rows = threadRows(s);
      $('archived').hidden = rows.archived.length === 0;
      setText($('archived-count'), 'Archived (' + rows.archived.length + ')');
      archived(rows.archived);
      listed(rows.listed);
    }
    const title = titleWithCount(totalPending(s));
    if (document.title !== title) document.title = title;
  });
}
