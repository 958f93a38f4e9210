// The Switchboard chat page: one /ws/chat socket, threads on the left, the current thread's
// events, tool calls, plan and permission cards on the right. Agent text is Markdown, rendered
// with marked and sanitized with DOMPurify before it becomes HTML.
import { marked } from '/webjars/marked/15.0.12/lib/marked.esm.js';
import DOMPurify from '/webjars/dompurify/3.2.6/dist/purify.es.mjs';

// The page's own elements, found once at load: agent content (sanitized without ids or names
// anyway) can never stand in for one of them later.
const page = new Map([...document.querySelectorAll('[id]')].map((e) => [e.id, e]));
const $ = (id) => page.get(id);
const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = text;
  return e;
};
// No ids, names, classes or styles (the page's own CSS and element names stay the page's), no forms
// or form controls: agent text can neither draw a fake permission card nor take the composer's place.
const PURIFY = {
  SANITIZE_NAMED_PROPS: true,
  FORBID_TAGS: ['form', 'input', 'textarea', 'button', 'select', 'option', 'label', 'fieldset', 'dialog',
    'style', 'template', 'iframe', 'object', 'embed'],
  FORBID_ATTR: ['id', 'name', 'class', 'style', 'form', 'formaction', 'tabindex', 'accesskey'],
};
// One class survives: a code block's language ("language-js", from marked), which only the
// highlighter reads; the page's CSS never names such a class.
DOMPurify.addHook('uponSanitizeAttribute', (node, data) => {
  if (node.tagName === 'CODE' && data.attrName === 'class' && /^language-[\w+#-]{1,30}$/.test(data.attrValue)) {
    data.forceKeepAttr = true;
  }
});
DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A' && node.getAttribute('href')) {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
});
const markdown = (text) => DOMPurify.sanitize(marked.parse(text ?? '', { async: false }), PURIFY);
const time = (iso) => iso ? new Date(iso).toLocaleTimeString() : '';

const state = {
  socket: null,
  retry: 0,
  agents: [],
  defaultAgent: null,
  threads: new Map(),   // threadId -> { info, lastSeq, busy, view }
  current: null,
  pendingThread: null,  // clientRef of a new_thread we wait for
  unsent: [],           // prompts typed while disconnected: { frame, shown }
  attachments: [],      // images for the next message: { mimeType, data, preview, name }
  agentImages: {},      // agentId -> whether it takes images (from its threads' prompt_capabilities)
};

// ---- login ----

async function checkSession() {
  const r = await fetch('/api/session', { credentials: 'same-origin' });
  if (r.ok) { showApp(); connect(); } else { showLogin(); }
}

function showLogin(message) {
  $('app').hidden = true;
  $('login').hidden = false;
  $('login-error').textContent = message ?? '';
  $('token').focus();
}

function showApp() {
  $('login').hidden = true;
  $('app').hidden = false;
}

$('login-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  // Asked on a person's click, as browsers require: a hidden tab can then say a question waits.
  if ('Notification' in window && Notification.permission === 'default') Notification.requestPermission();
  const r = await fetch('/api/login', {
    method: 'POST', credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ token: $('token').value.trim() }),
  });
  if (r.status === 204) { $('token').value = ''; showApp(); connect(); }
  else { showLogin(r.status === 401 ? 'That token is not right.' : 'Login failed (' + r.status + ').'); }
});

$('logout').addEventListener('click', async () => {
  await fetch('/api/logout', { method: 'POST', credentials: 'same-origin' });
  if (state.socket) state.socket.close();
  location.reload();
});

// ---- the socket ----

function connect() {
  const url = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/ws/chat';
  const ws = new WebSocket(url);
  state.socket = ws;
  setConn('connecting…', '');
  let opened = false;
  ws.onopen = () => {
    opened = true;
    state.retry = 0;
    setConn('connected', 'up');
    // Resume every thread this page follows, from the last event it has.
    for (const [id, t] of state.threads) {
      if (t.view) send({ type: 'attach', threadId: id, afterSeq: t.lastSeq });
    }
    // Then what was typed while disconnected (its own user_message event will show it).
    for (const { frame, shown } of state.unsent.splice(0)) {
      if (send(frame)) shown.remove();
    }
  };
  ws.onmessage = (m) => receive(JSON.parse(m.data));
  ws.onclose = async (ev) => {
    if (state.socket !== ws) return;
    setConn('disconnected', 'down');
    // What the server said of turns no longer holds: the attach after the reconnect says it again.
    $('busy').hidden = true;
    $('stop').disabled = true;
    if (!opened) {
      const r = await fetch('/api/session', { credentials: 'same-origin' }).catch(() => null);
      if (r && r.status === 401) { showLogin('Your session ended; log in again.'); return; }
    }
    if (ev.reason) toast(ev.reason);
    const delay = Math.min(15000, 500 * 2 ** state.retry++) * (0.75 + Math.random() / 2);
    setTimeout(connect, delay);
  };
}

function send(frame) {
  if (state.socket && state.socket.readyState === WebSocket.OPEN) {
    state.socket.send(JSON.stringify(frame));
    return true;
  }
  toast('Not connected; trying again…');
  return false;
}

function setConn(text, cls) {
  const c = $('conn');
  c.textContent = text;
  c.className = 'conn ' + cls;
}

function toast(text) {
  const t = $('toast');
  t.textContent = text;
  t.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { t.hidden = true; }, 4000);
}

function receive(f) {
  switch (f.type) {
    case 'welcome': return welcome(f);
    case 'thread': return threadCreated(f);
    case 'event': return threadOf(f.threadId).view && event(f);
    case 'permission_request': return card(f);
    case 'permission_resolved': return resolved(f);
    case 'permission_stale': return stale(f);
    case 'turn': if (f.attached) landAtEnd(f.threadId); return turn(f.threadId, f.busy);
    case 'pending': return pendingCounts(f.counts);
    case 'error':
      if (f.clientRef && f.clientRef === state.lastPrompt?.clientRef && state.current === state.lastPrompt.threadId
        && !$('input').value && !state.attachments.length) {
        $('input').value = state.lastPrompt.text; // refused: nothing typed is lost
        state.attachments = state.lastPrompt.attachments;
        renderAttach();
      }
      if (f.requestId && f.code !== 'already_answered') answerNotTaken(f);
      return toast(f.message ? f.code + ': ' + f.message : f.code);
    case 'pong': return;
  }
}

// ---- threads ----

function welcome(f) {
  state.agents = f.agents;
  state.defaultAgent = f.defaultAgent;
  const select = $('agent-select');
  select.replaceChildren(...f.agents.map((a) => {
    const o = el('option', null, a.name);
    o.value = a.id;
    o.selected = a.id === f.defaultAgent;
    return o;
  }));
  // Cluster mode with several agent nodes: the person picks the host a new thread runs on.
  const nodes = f.nodes || [];
  const pick = $('node-select');
  const previous = pick.value;
  pick.replaceChildren(...nodes.map((n) => {
    const o = el('option', null, n);
    o.value = n;
    o.selected = n === previous;
    return o;
  }));
  pick.hidden = $('node-label').hidden = nodes.length < 2;
  for (const t of f.threads) {
    const known = threadOf(t.threadId);
    known.info = t;
    known.busy = t.busy;
    known.pending = t.pending || 0;
  }
  renderThreads();
  renderTitle();
  refreshPool();
  refreshKnocks();
  const listed = f.threads.filter((t) => !t.archived);
  if (!state.current && listed.length) open(listed[listed.length - 1].threadId);
}

function threadOf(id) {
  if (!state.threads.has(id)) state.threads.set(id, { info: { threadId: id }, lastSeq: 0, busy: false, view: null });
  return state.threads.get(id);
}

$('new-thread').addEventListener('submit', (ev) => {
  ev.preventDefault();
  state.pendingThread = 'new-' + Date.now();
  const frame = { type: 'new_thread', agent: $('agent-select').value, clientRef: state.pendingThread };
  if (!$('node-select').hidden && $('node-select').value) frame.node = $('node-select').value;
  send(frame);
});

// A thread made here, in another tab or from an IM chat: every page lists it at once.
function threadCreated(f) {
  if (f.deleted) {
    // Deleted (here or in another tab): gone from the lists; a page that had it open moves on.
    state.threads.delete(f.threadId);
    if (state.current === f.threadId) {
      state.current = null;
      const next = [...state.threads.values()].reverse().find((x) => !x.info.archived);
      if (next) open(next.info.threadId);
      else {
        $('log').replaceChildren(el('p', 'empty', 'That thread was deleted. Start a new one on the left.'));
        $('thread-title').textContent = 'No thread yet';
        $('input').disabled = true;
        $('send').disabled = true;
        renderArchive();
      }
    }
    renderThreads();
    renderTitle();
    return;
  }
  const known = state.threads.has(f.threadId);
  const t = threadOf(f.threadId);
  if (!known) t.info = { threadId: f.threadId, agent: f.agent, title: f.title || null, busy: false, node: f.node };
  else if (f.title) {
    t.info.title = f.title; // it got its title (its first prompt), its agent named it, or someone renamed it
    if (f.threadId === state.current) $('thread-title').textContent = f.title;
  }
  const archivedHere = !t.info.archived && f.archived && f.threadId === state.current;
  t.info.archived = !!f.archived;
  renderThreads();
  renderArchive();
  if (archivedHere) {
    // Archived (here or in another tab): the page moves on to the newest thread still listed.
    const next = [...state.threads.values()].reverse().find((x) => !x.info.archived);
    if (next) open(next.info.threadId);
  }
  if (f.clientRef && f.clientRef === state.pendingThread) open(f.threadId);
}

// Questions waiting in threads, attached here or not ({threadId: count} of those that changed): a
// badge on each thread, a count in the tab's title, and a notification when the tab is hidden.
function pendingCounts(counts) {
  for (const [id, count] of Object.entries(counts || {})) {
    const t = threadOf(id);
    const more = count > (t.pending || 0);
    t.pending = count;
    if (more && document.hidden && 'Notification' in window && Notification.permission === 'granted') {
      new Notification('Switchboard: permission needed', { body: t.info.title || 'A thread asks for your answer',
        tag: 'switchboard-' + id });
    }
  }
  renderThreads();
  renderTitle();
}

function renderTitle() {
  const total = [...state.threads.values()].reduce((n, t) => n + (t.pending || 0), 0);
  document.title = (total ? '(' + total + ') ' : '') + 'Switchboard';
}

function renderThreads() {
  const all = [...state.threads.values()].reverse();
  const archived = all.filter((t) => t.info.archived);
  $('archived').hidden = archived.length === 0;
  $('archived-count').textContent = 'Archived (' + archived.length + ')';
  $('archived-threads').replaceChildren(...archived.map((t) => {
    const li = el('li', 'archived-thread');
    const b = el('button', t.info.threadId === state.current ? 'current' : '');
    b.append(el('span', 'title', t.info.title || 'New thread'), el('span', 'agent', agentLabel(t.info)));
    b.addEventListener('click', () => open(t.info.threadId));
    const restore = el('button', 'restore', 'Restore');
    restore.type = 'button';
    restore.setAttribute('aria-label', 'Restore ' + (t.info.title || 'this thread'));
    restore.addEventListener('click', () => send({ type: 'archive_thread', threadId: t.info.threadId, archived: false }));
    const remove = el('button', 'delete', 'Delete');
    remove.type = 'button';
    remove.setAttribute('aria-label', 'Delete ' + (t.info.title || 'this thread') + ' for good');
    remove.addEventListener('click', () => {
      if (window.confirm('Delete \u201c' + (t.info.title || 'this thread') + '\u201d for good? Its conversation and '
        + 'its workspace files are removed; the permission audit keeps its requests.')) {
        send({ type: 'delete_thread', threadId: t.info.threadId });
      }
    });
    li.append(b, restore, remove);
    return li;
  }));
  const list = $('threads');
  list.replaceChildren(...all.filter((t) => !t.info.archived).map((t) => {
    const b = el('button', t.info.threadId === state.current ? 'current' : '');
    b.append(el('span', 'title', t.info.title || 'New thread'), el('span', 'agent', agentLabel(t.info)));
    if (t.pending) {
      const badge = el('span', 'pending', String(t.pending));
      badge.title = t.pending + ' waiting for your answer';
      b.append(badge);
    }
    b.addEventListener('click', () => open(t.info.threadId));
    const li = el('li');
    li.append(b);
    return li;
  }));
}

// The agent's name, and in a cluster the node it runs on.
function agentLabel(info) {
  return agentName(info.agent) + (info.node ? ' \u00b7 ' + info.node : '');
}

function agentName(id) {
  return (state.agents.find((a) => a.id === id) || { name: id || '' }).name;
}

function open(id) {
  // Each thread keeps its own draft: what was typed stays with the thread it was typed for.
  if (state.current && state.current !== id) threadOf(state.current).draft = $('input').value;
  const t = threadOf(id);
  if (state.current !== id) $('input').value = t.draft || '';
  state.current = id;
  if (!t.view) {
    t.view = { log: el('section', 'log'), plan: null, tools: new Map(), allTools: [], cards: new Map(), agentMsg: null,
      thought: null, scrolled: false, terminalOutputs: {} };
    t.view.log.id = 'log';
    send({ type: 'attach', threadId: id, afterSeq: 0 });
  }
  showAudit(false);
  $('log').replaceWith(t.view.log);
  page.set('log', t.view.log);
  $('thread-title').textContent = t.info.title || 'New thread';
  $('input').disabled = false;
  $('send').disabled = false;
  $('attach').disabled = false;
  renderPlan(t);
  renderModes(t);
  renderConfig(t);
  renderUsage(t);
  renderArchive();
  clearAttachments();
  renderAttach();
  turn(id, t.busy);
  renderThreads();
  setMenu(false);
  $('input').focus();
}

// The thread menu (phones): Esc or a tap outside closes it; closed and off screen, it is inert
// (out of the tab order and of what screen readers see).
const phone = window.matchMedia('(max-width: 760px)');
function setMenu(open) {
  $('app').classList.toggle('menu-open', open);
  $('sidebar').inert = phone.matches && !open;
  $('menu').setAttribute('aria-expanded', String(open));
}
// The archive button archives the open thread, or restores it when it is archived already.
function renderArchive() {
  const archived = !!(state.current && threadOf(state.current).info.archived);
  const label = archived ? 'Restore this thread' : 'Archive this thread';
  $('archive').setAttribute('aria-label', label);
  $('archive').title = archived ? 'Restore this thread to the list' : 'Archive this thread (restore it from Archived in the thread list)';
  $('archive').classList.toggle('restoring', archived);
  $('archive').disabled = !state.current;
}

$('archive').addEventListener('click', () => {
  if (!state.current) return;
  send({ type: 'archive_thread', threadId: state.current, archived: !threadOf(state.current).info.archived });
});

$('rename').addEventListener('click', () => {
  if (!state.current) return;
  const t = threadOf(state.current);
  const title = window.prompt('Rename this thread', t.info.title || '');
  if (title && title.trim()) send({ type: 'rename_thread', threadId: state.current, title: title.trim() });
});

$('menu').addEventListener('click', () => setMenu(!$('app').classList.contains('menu-open')));
document.addEventListener('keydown', (ev) => { if (ev.key === 'Escape' && $('app').classList.contains('menu-open')) setMenu(false); });
document.addEventListener('pointerdown', (ev) => {
  if ($('app').classList.contains('menu-open') && !$('sidebar').contains(ev.target) && ev.target !== $('menu')) setMenu(false);
});
phone.addEventListener('change', () => setMenu(false));
setMenu(false);

// ---- the permission audit ----

function showAudit(visible) {
  $('audit').hidden = !visible;
  $('log').hidden = visible;
  $('composer').hidden = visible;
  if (visible) {
    $('plan').hidden = true;
    $('thread-title').textContent = 'Permission audit';
    setMenu(false);
    loadAudit();
  }
}

async function loadAudit() {
  const r = await fetch('/api/permissions?state=all&limit=100', { credentials: 'same-origin' });
  if (!r.ok) { toast('Could not load the audit (' + r.status + ')'); return; }
  const { requests } = await r.json();
  const list = $('audit-list');
  if (!requests.length) { list.replaceChildren(el('li', 'meta', 'No permission requests yet.')); return; }
  list.replaceChildren(...requests.map((q) => {
    const li = el('li');
    li.dataset.requestId = q.requestId;
    const tc = q.toolCall || {};
    li.append(el('span', 'what', (tc.kind ? tc.kind + ': ' : '') + (tc.title || tc.toolCallId || 'a tool call')));
    const o = q.outcome;
    let verdict;
    if (!o) verdict = el('span', 'pending', 'waiting for an answer');
    else if (o.outcome === 'selected') {
      const option = (q.options || []).find((x) => x.optionId === o.optionId);
      const by = o.answeredBy || {};
      verdict = el('span', 'selected', (option ? option.name : o.optionId) + ' (' + o.kind + ') — answered by '
        + (by.user ? by.user + ' on ' : '') + by.surface);
    } else verdict = el('span', 'cancelled', 'Cancelled: ' + reasonText(o.reason));
    li.append(verdict);
    const thread = state.threads.get(q.threadId);
    if (thread) {
      const go = el('button', 'link', 'Open the thread');
      go.addEventListener('click', () => open(q.threadId));
      li.append(go);
    }
    li.append(el('span', 'meta', 'Asked ' + new Date(q.createdAt).toLocaleString()
      + (q.endedAt ? ', ended ' + new Date(q.endedAt).toLocaleString() : '')
      + ' · thread ' + (thread?.info.title || q.threadId) + ' · agent ' + (q.agentId || '')));
    return li;
  }));
}

$('audit-open').addEventListener('click', () => showAudit(true));
$('audit-refresh').addEventListener('click', loadAudit);

// Alt+1..9 answers the current thread's waiting question with its n-th option (the oldest first):
// no mouse, no leaving the composer.
document.addEventListener('keydown', (ev) => {
  if (!ev.altKey || ev.ctrlKey || ev.metaKey || !/^Digit[1-9]$/.test(ev.code) || !state.current) return;
  const v = threadOf(state.current).view;
  const waiting = v && [...v.cards.values()].find((c) => !c.el.classList.contains('resolved')
    && c.section.querySelector('.options button:not(:disabled)'));
  const button = waiting?.section.querySelectorAll('.options button')[Number(ev.code.slice(5)) - 1];
  if (button && !button.disabled) {
    ev.preventDefault();
    button.click();
  }
});

// ---- composing ----

// Images: attached with the button, pasted or dropped; scaled down in the page when too large for a
// message (the gateway takes 700 KB an image), each with a small preview the transcript keeps.
const MAX_IMAGES = 4;
const MAX_IMAGE_BYTES = 700 * 1024;

function renderAttach() {
  const t = state.current && threadOf(state.current);
  const takes = t ? (t.images ?? state.agentImages[t.info.agent]) : undefined;
  // Hidden only where the agent said it takes none; before its first start nobody knows.
  $('attach').hidden = takes === false;
  const box = $('attachments');
  box.hidden = state.attachments.length === 0;
  box.replaceChildren(...state.attachments.map((a, i) => {
    const item = el('span', 'attachment');
    const img = el('img');
    img.src = a.preview;
    img.alt = a.name;
    const remove = el('button', 'remove', '×');
    remove.type = 'button';
    remove.setAttribute('aria-label', 'Remove ' + a.name);
    remove.addEventListener('click', () => { state.attachments.splice(i, 1); renderAttach(); $('input').focus(); });
    item.append(img, remove);
    return item;
  }));
}

function clearAttachments() {
  state.attachments = [];
  renderAttach();
}

// From a data: URL (the page's policy allows images from data:, not blob:).
const loadImage = (url) => new Promise((resolve, reject) => {
  const img = new Image();
  img.onload = () => resolve(img);
  img.onerror = () => reject(new Error('not an image the browser can read'));
  img.src = url;
});
const readAsDataUrl = (file) => new Promise((resolve, reject) => {
  const r = new FileReader();
  r.onload = () => resolve(r.result);
  r.onerror = () => reject(new Error('could not be read'));
  r.readAsDataURL(file);
});

// The image drawn at most `side` pixels on its longer side, as a data: URL of `type`.
function drawn(img, side, type, quality) {
  const scale = Math.min(1, side / Math.max(img.naturalWidth, img.naturalHeight));
  const c = document.createElement('canvas');
  c.width = Math.max(1, Math.round(img.naturalWidth * scale));
  c.height = Math.max(1, Math.round(img.naturalHeight * scale));
  c.getContext('2d').drawImage(img, 0, 0, c.width, c.height);
  return c.toDataURL(type, quality);
}

const base64Bytes = (dataUrl) => Math.floor((dataUrl.length - dataUrl.indexOf(',') - 1) * 3 / 4);

async function addImages(files) {
  for (const file of files) {
    if (state.attachments.length >= MAX_IMAGES) { toast('At most ' + MAX_IMAGES + ' images a message.'); break; }
    if (!/^image\/(png|jpeg|gif|webp)$/.test(file.type)) { toast(file.name + ': only PNG, JPEG, GIF and WebP images.'); continue; }
    try {
      let url = await readAsDataUrl(file);
      const img = await loadImage(url);
      // Too large: smaller and smaller JPEGs until one fits (a model sees no more than ~1,600 px anyway).
      for (let side = 1600; base64Bytes(url) > MAX_IMAGE_BYTES && side >= 200; side = Math.round(side * 0.7)) {
        url = drawn(img, side, 'image/jpeg', 0.85);
      }
      if (base64Bytes(url) > MAX_IMAGE_BYTES) { toast(file.name + ' is too large to send.'); continue; }
      const mimeType = url.slice(5, url.indexOf(';'));
      state.attachments.push({ mimeType, data: url.slice(url.indexOf(',') + 1), preview: drawn(img, 240, 'image/jpeg', 0.7),
        name: file.name || 'pasted image' });
    } catch (err) {
      toast((file.name || 'The image') + ': ' + err.message);
    }
  }
  renderAttach();
}

$('attach').addEventListener('click', () => $('attach-file').click());
$('attach-file').addEventListener('change', (ev) => { addImages([...ev.target.files]); ev.target.value = ''; });
$('input').addEventListener('paste', (ev) => {
  const files = [...(ev.clipboardData?.files || [])].filter((f) => f.type.startsWith('image/'));
  if (files.length) { ev.preventDefault(); addImages(files); }
});
$('composer').addEventListener('dragover', (ev) => ev.preventDefault());
$('composer').addEventListener('drop', (ev) => {
  const files = [...(ev.dataTransfer?.files || [])].filter((f) => f.type.startsWith('image/'));
  if (files.length) { ev.preventDefault(); addImages(files); }
});

// A chat frame is at most 1 MiB: images that do not fit together are made smaller until they do.
const FRAME_BUDGET = 1000 * 1000;
const frameBytes = (frame) => new Blob([JSON.stringify(frame)]).size;

async function fitImages(frame) {
  for (let round = 0; round < 16 && frameBytes(frame) > FRAME_BUDGET; round++) {
    const largest = frame.images.reduce((a, b) => (b.data.length > a.data.length ? b : a));
    const img = await loadImage('data:' + largest.mimeType + ';base64,' + largest.data);
    const url = drawn(img, Math.round(Math.max(img.naturalWidth, img.naturalHeight) * 0.7), 'image/jpeg', 0.8);
    largest.mimeType = 'image/jpeg';
    largest.data = url.slice(url.indexOf(',') + 1);
  }
  return frameBytes(frame) <= FRAME_BUDGET;
}

$('composer').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const text = $('input').value;
  if ((!text.trim() && !state.attachments.length) || !state.current) return;
  const frame = { type: 'prompt', threadId: state.current, text, clientRef: 'p-' + Date.now() };
  if (state.attachments.length) {
    frame.images = state.attachments.map(({ mimeType, data, preview }) => ({ mimeType, data, preview }));
    if (!(await fitImages(frame))) {
      toast('The message is too large to send; remove an image or some text.');
      return; // the draft and its images stay
    }
  }
  // Kept until the server takes it: refused, the text and images come back to the composer.
  state.lastPrompt = { clientRef: frame.clientRef, threadId: state.current, text, attachments: state.attachments };
  if (!(state.socket && state.socket.readyState === WebSocket.OPEN)) {
    // Not lost: shown as waiting, and sent as soon as the connection is back.
    const shown = el('div', 'msg user unsent', text);
    shown.append(el('span', 'unsent-note', ' (waiting for the connection)'));
    threadOf(state.current).view?.log.append(shown);
    state.unsent.push({ frame, shown });
    $('input').value = '';
    clearAttachments();
    renderCommands();
    return;
  }
  if (send(frame)) {
    $('input').value = '';
    clearAttachments();
    renderCommands();
  }
});

// The agent's slash commands, offered while the draft is "/" and a word: click (or Tab) completes.
function renderCommands() {
  const menu = $('commands');
  const text = $('input').value;
  const t = state.current && threadOf(state.current);
  const m = /^\/(\S*)$/.exec(text);
  const matching = m && t && t.commands ? t.commands.filter((c) => c.name.startsWith(m[1])) : [];
  menu.hidden = matching.length === 0;
  menu.replaceChildren(...matching.map((c) => {
    const b = el('button', 'command');
    b.type = 'button';
    b.append(el('strong', null, '/' + c.name), el('span', null, c.description ? ' ' + c.description : ''));
    b.addEventListener('click', () => {
      $('input').value = '/' + c.name + ' ';
      menu.hidden = true;
      $('input').focus();
    });
    return b;
  }));
}
$('input').addEventListener('input', renderCommands);

const touch = window.matchMedia('(pointer: coarse)');
$('input').addEventListener('keydown', (ev) => {
  if (ev.key === 'Tab' && !$('commands').hidden) {
    ev.preventDefault();
    $('commands').querySelector('button')?.click();
    return;
  }
  if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing && !touch.matches) {
    ev.preventDefault();
    $('composer').requestSubmit();
  }
});

$('stop').addEventListener('click', () => state.current && send({ type: 'cancel', threadId: state.current }));

// The agent processes: how many run of how many allowed, their memory, prompts waiting for a slot.
let poolAsked = 0;
async function refreshPool() {
  if (Date.now() - poolAsked < 1000) return;
  poolAsked = Date.now();
  const r = await fetch('/api/agents', { credentials: 'same-origin' }).catch(() => null);
  if (!r || !r.ok) return;
  const p = await r.json();
  let text = 'Agents: ' + p.processes + ' running of ' + p.maxProcesses + ', ' + Math.round(p.rssBytes / 1048576) + ' MiB';
  if (p.queuedPrompts) text += ' · ' + p.queuedPrompts + ' waiting for a free slot';
  $('agent-pool').textContent = text;
  $('agent-pool').title = 'Idle agents stop after ' + p.idleStopSeconds + ' s (' + p.idleStops + ' so far; '
    + p.evictions + ' stopped to make room). Sandbox: ' + p.sandbox + '.';
}
setInterval(() => { if (!$('app').hidden && !document.hidden) refreshPool(); }, 15000);

// Who wrote to a plugin without being let in (plugins[].users): the operator admits them in the config.
async function refreshKnocks() {
  const r = await fetch('/api/knocks', { credentials: 'same-origin' }).catch(() => null);
  if (!r || !r.ok) return;
  const knocks = (await r.json()).knocks;
  $('knocks').hidden = knocks.length === 0;
  $('knock-list').replaceChildren(...knocks.slice().reverse().map((k) => el('li', null,
    (k.name ? k.name + ' ' : '') + '(' + k.userId + ') on ' + k.plugin + ', ' + new Date(k.at).toLocaleString())));
}
setInterval(() => { if (!$('app').hidden && !document.hidden) refreshKnocks(); }, 30000);

// The server's turn frame ends an attach: the history is in, so land at its end, not its top
// (once, after this frame's renders).
function landAtEnd(id) {
  const v = threadOf(id).view;
  if (!v || v.scrolled) return;
  v.scrolled = true;
  requestAnimationFrame(() => { v.log.scrollTop = v.log.scrollHeight; });
}

function turn(id, busy) {
  const t = threadOf(id);
  t.busy = busy;
  refreshPool();

  if (id !== state.current) return;
  $('busy').hidden = !busy;
  $('stop').disabled = !busy;
}

// ---- events ----

function event(f) {
  const t = threadOf(f.threadId);
  if (f.seq <= t.lastSeq) return;
  t.lastSeq = f.seq;
  const v = t.view;
  const e = f.event;
  const stick = v.log.scrollHeight - v.log.scrollTop - v.log.clientHeight < 80;
  v.log.querySelector('.empty')?.remove();
  switch (e.kind) {
    case 'user_message': {
      v.agentMsg = null; v.thought = null; v.tools = new Map();
      const m = el('div', 'msg user', e.text);
      if (e.images?.length) m.append(userImages(e.images));
      v.log.append(m);
      if (!t.info.title) { t.info.title = e.text.slice(0, 60) || '(an image)'; renderThreads(); if (f.threadId === state.current) $('thread-title').textContent = t.info.title; }
      break;
    }
    case 'prompt_capabilities':
      // Whether this thread's agent takes images: the attach button follows it.
      t.images = e.image;
      state.agentImages[t.info.agent] = e.image;
      if (f.threadId === state.current) renderAttach();
      break;
    case 'acp':
      update(t, e.update, f.at);
      break;
    case 'turn_started':
      // Tool call ids are the agent's and may come again in a later turn (a restarted agent reuses them),
      // and so may terminal ids.
      v.agentMsg = null; v.thought = null; v.tools = new Map(); v.terminalOutputs = {};
      break;
    case 'turn_ended':
      v.agentMsg = null; v.thought = null;
      if (f.threadId === state.current && v.scrolled) announce('The agent finished its turn.');
      if (e.stopReason && e.stopReason !== 'end_turn') system(v, stopText(e.stopReason), e.stopReason === 'error');
      break;
    case 'agent_exited':
      v.agentMsg = null;
      system(v, 'The agent exited' + (e.signal ? ' (' + e.signal + ')' : e.code !== undefined ? ' with code ' + e.code : '')
        + '. The next message starts it again.', true);
      break;
    case 'system':
      system(v, e.text, e.level === 'error');
      break;
    case 'session_modes':
      t.modes = e.modes;
      if (f.threadId === state.current) renderModes(t);
      break;
    case 'terminal_output': {
      // A finished command's output goes into this turn's tool call that shows its terminal; it may
      // come before the agent has said which one (a quick command), so it is kept for the turn.
      v.terminalOutputs[e.terminalId] = e;
      for (const tc of v.tools.values()) {
        if ((tc.data.content || []).some((c) => c.type === 'terminal' && c.terminalId === e.terminalId)) {
          renderToolBody(tc.body, tc.data, v.terminalOutputs);
        }
      }
      break;
    }
    case 'session_config':
      t.config = e.configOptions;
      if (f.threadId === state.current) renderConfig(t);
      break;
  }
  if (stick) v.log.scrollTop = v.log.scrollHeight;
}

// Why a question ended without an answer, in words (the ledger keeps the slugs).
const REASONS = {
  'session-cancelled': 'the turn was stopped', 'agent-exited': 'the agent exited', 'surface-gone': 'no one was left who could answer',
  'no-surface': 'there was nowhere to show it', shutdown: 'the gateway stopped', 'voided-by-restart': 'the gateway restarted',
  'too-many-pending': 'too many questions were waiting at once', 'not-recorded': 'it could not be recorded',
  'no-edge': 'no surface was connected to answer it',
};
const reasonText = (r) => REASONS[r] || (r ? r.replace(/-/g, ' ') : 'no reason given');

function stopText(reason) {
  return { cancelled: 'Stopped.', max_tokens: 'The agent hit its token limit.', refusal: 'The agent refused.',
    max_turn_requests: 'The agent hit its request limit.', error: 'The turn failed.' }[reason] || 'Turn ended: ' + reason;
}

// What a screen reader hears: moments, not every chunk (the log itself is not a live region).
function announce(text) {
  $('announce').textContent = '';
  requestAnimationFrame(() => { $('announce').textContent = text; });
}

function system(v, text, isError) {
  v.log.append(el('div', 'msg system' + (isError ? ' error' : ''), text));
}

function update(t, u, at) {
  const v = t.view;
  switch (u.sessionUpdate) {
    case 'agent_message_chunk': {
      if (!v.agentMsg) {
        v.agentMsg = { el: el('div', 'msg agent'), text: '' };
        v.log.append(v.agentMsg.el);
      }
      if (u.content?.type === 'image' || u.content?.type === 'audio') {
        // Shown as it came, after the text so far; the text that follows goes on below it.
        const media = u.content.type === 'image' ? imageOf(u.content.mimeType, u.content.data)
          : audioOf(u.content.mimeType, u.content.data);
        if (media) { media.classList.add('agent-' + u.content.type); v.log.append(media); v.agentMsg = null; }
        else if (u.content.omittedBytes) {
          // History keeps only a note of large media (it was shown whole when it came).
          v.log.append(el('p', 'media-note', (u.content.type === 'image' ? '🖼 An image' : '🔊 Audio') + ' from the agent ('
            + Math.round(u.content.omittedBytes / 1024) + ' KB), shown when it came; history keeps only this note.'));
          v.agentMsg = null;
        }
        break;
      }
      v.agentMsg.text += blockText(u.content);
      renderSoon(v.agentMsg);
      break;
    }
    case 'agent_thought_chunk': {
      if (!v.thought) {
        const d = el('details', 'thought');
        d.append(el('summary', null, 'Thinking'), el('div'));
        v.thought = { el: d, text: '' };
        v.log.append(d);
      }
      v.thought.text += blockText(u.content);
      v.thought.el.lastChild.innerHTML = markdown(v.thought.text);
      break;
    }
    case 'user_message_chunk':
      v.log.append(el('div', 'msg user', blockText(u.content)));
      break;
    case 'tool_call':
    case 'tool_call_update':
      v.agentMsg = null;
      toolCall(v, u, at);
      break;
    case 'plan':
      v.plan = u.entries || [];
      if (t.info.threadId === state.current) renderPlan(t);
      break;
    case 'available_commands_update':
      // The agent's slash commands: offered as the person types "/".
      t.commands = u.availableCommands || [];
      break;
    case 'usage_update':
      // How full the agent's context window is (and what it cost, when it says).
      t.usage = u;
      if (t.info.threadId === state.current) renderUsage(t);
      break;
    case 'config_option_update':
      t.config = u.configOptions || [];
      if (t.info.threadId === state.current) renderConfig(t);
      break;
    case 'current_mode_update':
      // The agent (or a person, in any tab) switched modes: the selector shows it.
      if (t.modes) t.modes.currentModeId = u.currentModeId;
      if (t.info.threadId === state.current) renderModes(t);
      break;
    default:
      break; // other kinds (commands, modes, usage) are not shown
  }
}

// Markdown is rendered at most once per frame however fast chunks come (was once per chunk: O(n²)).
function renderSoon(msg) {
  if (msg.pending) return;
  msg.pending = true;
  requestAnimationFrame(() => {
    msg.pending = false;
    const log = msg.el.parentElement;
    const stick = log && log.scrollHeight - log.scrollTop - log.clientHeight < 80;
    msg.el.innerHTML = markdown(msg.text);
    addCopyButtons(msg.el);
    if (stick) log.scrollTop = log.scrollHeight; // a reader at the end stays there as the text grows
  });
}

// Code blocks get a copy button (the clipboard needs a secure context: https or localhost), and,
// when they name a language highlight.js knows, colours and the language's name.
function addCopyButtons(root) {
  for (const pre of root.querySelectorAll('pre')) {
    const code = pre.querySelector('code');
    const lang = /^language-(.+)$/.exec(code?.className || '')?.[1];
    const known = lang && window.hljs?.getLanguage(lang);
    const b = el('button', 'copy', 'Copy');
    b.type = 'button';
    b.addEventListener('click', async () => {
      try { await navigator.clipboard.writeText(pre.textContent); b.textContent = 'Copied'; }
      catch { b.textContent = 'Copy failed'; }
      setTimeout(() => { b.textContent = 'Copy'; }, 1500);
    });
    const wrap = el('div', 'code');
    pre.replaceWith(wrap);
    wrap.append(b, pre);
    if (known) {
      window.hljs.highlightElement(code);
      wrap.prepend(el('span', 'lang', known.name || lang));
    }
  }
}

// An image block as an <img>, only for the kinds the page expects and base64 that looks like base64.
function imageOf(mimeType, data) {
  if (!/^image\/(png|jpeg|gif|webp)$/.test(mimeType || '') || !/^[A-Za-z0-9+/=]+$/.test(data || '')) return null;
  const img = el('img');
  img.src = 'data:' + mimeType + ';base64,' + data;
  img.alt = 'An image from the agent';
  return img;
}

// An audio block as a player (data: URLs; the page's policy allows media from data: only).
function audioOf(mimeType, data) {
  if (!/^audio\/[\w.+-]+$/.test(mimeType || '') || !/^[A-Za-z0-9+/=]+$/.test(data || '')) return null;
  const audio = el('audio');
  audio.controls = true;
  audio.src = 'data:' + mimeType + ';base64,' + data;
  audio.setAttribute('aria-label', 'Audio from the agent');
  return audio;
}

// What the person attached to a message: the previews kept in the transcript, or a line naming the image.
function userImages(images) {
  const box = el('div', 'user-images');
  for (const i of images) {
    const preview = typeof i.preview === 'string' && /^data:image\/(png|jpeg|webp|gif);base64,[A-Za-z0-9+/=]+$/.test(i.preview)
      ? i.preview : null;
    if (preview) {
      const img = el('img');
      img.src = preview;
      img.alt = 'Attached image (' + i.mimeType + ', ' + Math.round(i.bytes / 1024) + ' KB)';
      box.append(img);
    } else {
      box.append(el('span', 'image-note', '🖼 ' + i.mimeType + ', ' + Math.round(i.bytes / 1024) + ' KB'));
    }
  }
  return box;
}

function blockText(c) {
  if (!c) return '';
  if (c.type === 'text') return c.text || '';
  if (c.type === 'resource_link') return '[' + (c.name || c.uri) + '](' + c.uri + ')';
  if (c.type === 'resource') return c.resource?.text || '';
  return '';
}

// The agent's session modes (ACP), when it offers some: the current one selected, a change sent.
function renderModes(t) {
  const select = $('mode');
  const available = t?.modes?.availableModes || [];
  select.hidden = available.length === 0;
  select.replaceChildren(...available.map((m) => {
    const o = el('option', null, m.name || m.id);
    o.value = m.id;
    if (m.description) o.title = m.description;
    o.selected = m.id === t.modes.currentModeId;
    return o;
  }));
}
function renderUsage(t) {
  const u = t?.usage;
  const box = $('usage');
  if (!u || typeof u.used !== 'number' || typeof u.size !== 'number' || u.size <= 0) { box.hidden = true; return; }
  const k = (n) => (n >= 1000 ? Math.round(n / 1000) + 'k' : String(n));
  let text = k(u.used) + ' / ' + k(u.size) + ' tokens';
  if (u.cost && typeof u.cost.amount === 'number') text += ' · ' + u.cost.amount.toFixed(2) + ' ' + (u.cost.currency || '');
  box.textContent = text;
  box.title = 'How much of the agent\'s context window this session uses';
  box.hidden = false;
}

// The agent's session settings (ACP config options: model, reasoning, ...): one selector each.
// When one of them is the mode, it replaces the older mode selector (as ACP asks of clients).
function renderConfig(t) {
  const box = $('config');
  const options = (t?.config || []).filter((c) => c.type === 'select' && Array.isArray(c.options));
  box.hidden = options.length === 0;
  box.replaceChildren(...options.map((c) => {
    const select = el('select');
    select.setAttribute('aria-label', c.name || c.id);
    if (c.description) select.title = c.description;
    select.dataset.configId = c.id;
    for (const o of c.options) {
      const opt = el('option', null, o.name || o.value);
      opt.value = o.value;
      opt.selected = o.value === c.currentValue;
      select.append(opt);
    }
    select.addEventListener('change', () => {
      if (state.current) send({ type: 'set_config', threadId: state.current, configId: c.id, value: select.value });
    });
    return select;
  }));
  if (options.some((c) => c.category === 'mode')) $('mode').hidden = true;
}

$('mode').addEventListener('change', () => {
  if (state.current) send({ type: 'set_mode', threadId: state.current, modeId: $('mode').value });
});

function renderPlan(t) {
  const box = $('plan');
  const entries = t.view?.plan;
  if (!entries || !entries.length) { box.hidden = true; return; }
  const ol = el('ol');
  for (const p of entries) ol.append(el('li', p.status, p.content));
  box.replaceChildren(el('strong', null, 'Plan'), ol);
  box.hidden = false;
}

// One box per tool call: its body (re-rendered as updates come) and, when the agent asks about it,
// the permission inside it (Zed's shape: the question where the call is, the diff shown once).
function newTool(v, id, at) {
  const tc = { id, at, data: {}, el: el('div', 'tool'), body: el('div', 'tool-body') };
  tc.el.append(tc.body);
  v.allTools.push(tc);
  v.log.append(tc.el);
  return tc;
}

function toolCall(v, u, at) {
  let tc = v.tools.get(u.toolCallId);
  if (!tc) {
    tc = newTool(v, u.toolCallId, at);
    v.tools.set(u.toolCallId, tc);
  }
  for (const [k, val] of Object.entries(u)) if (val !== undefined && val !== null) tc.data[k] = val;
  renderToolBody(tc.body, tc.data, v.terminalOutputs);
}

// The box a question belongs to: the latest call of that id begun before it was asked.
function toolFor(v, toolCallId, askedAt) {
  let best = null;
  for (const tc of v.allTools) {
    if (tc.id === toolCallId && (tc.at == null || askedAt == null || tc.at <= askedAt + 1000)) best = tc;
  }
  return best;
}

function renderToolBody(box, d, terminalOutputs = {}) {
  const head = el('div', 'tool-head');
  head.append(el('span', 'badge', d.kind || 'tool'), el('span', 'tool-title', d.title || d.toolCallId));
  if (d.status) head.append(el('span', 'badge ' + d.status, d.status.replace('_', ' ')));
  const parts = [head];
  if (Array.isArray(d.locations) && d.locations.length) {
    const ul = el('ul', 'locations');
    for (const l of d.locations) {
      const li = el('li', null, shortPath(l.path) + (l.line ? ':' + l.line : ''));
      li.title = l.path;
      ul.append(li);
    }
    parts.push(ul);
  }
  for (const c of d.content || []) {
    if (c.type === 'diff') parts.push(diff(c));
    else if (c.type === 'content') { const div = el('div'); div.innerHTML = markdown(blockText(c.content)); parts.push(div); }
    else if (c.type === 'terminal') {
      const done = terminalOutputs[c.terminalId];
      if (!done) { parts.push(el('div', 'badge', 'running in a terminal…')); continue; }
      const x = done.exitStatus || {};
      parts.push(el('pre', 'terminal', (done.truncated ? '…\n' : '') + (done.output || '')));
      parts.push(el('div', 'exit ' + (x.exitCode === 0 ? 'ok' : 'failed'),
        x.signal ? 'Stopped by ' + x.signal : 'Exit code ' + x.exitCode));
    }
  }
  const shownTerminal = (d.content || []).some((c) => c.type === 'terminal' && terminalOutputs[c.terminalId]);
  if (d.rawOutput !== undefined && d.rawOutput !== null && !shownTerminal) {
    // What the tool returned as the agent reports it (Codex's command output comes only here).
    const out = el('details', 'raw-output');
    const text = typeof d.rawOutput === 'string' ? d.rawOutput
      : d.rawOutput.output ?? d.rawOutput.stdout ?? JSON.stringify(d.rawOutput, null, 2);
    out.append(el('summary', null, 'Output'), el('pre', null, String(text)));
    parts.push(out);
  }
  box.replaceChildren(...parts);
}

// Paths inside a thread's workspace are long and alike: show them from the workspace on.
function shortPath(path) {
  const m = /\/workspaces\/[^/]+\/(.*)$/.exec(path || '');
  return m ? m[1] : path;
}

const lines = (text) => {
  const all = text.split('\n');
  if (all.length > 1 && all[all.length - 1] === '') all.pop();
  return all;
};

// A line diff (longest common subsequence), enough for the edits agents propose.
function diff(c) {
  const box = el('div', 'diff');
  const path = el('div', 'path', shortPath(c.path));
  path.title = c.path;
  box.append(path);
  const a = lines(c.oldText ?? '');
  const b = lines(c.newText ?? '');
  if (c.oldText == null) { for (const line of b) box.append(el('div', 'add', '+ ' + line)); return box; }
  if (a.length * b.length > 4_000_000) { for (const line of b) box.append(el('div', null, '  ' + line)); return box; }
  const n = a.length, m = b.length;
  const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--)
    lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  let i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) { box.append(el('div', null, '  ' + a[i])); i++; j++; }
    else if (j < m && (i >= n || lcs[i][j + 1] >= lcs[i + 1][j])) { box.append(el('div', 'add', '+ ' + b[j])); j++; }
    else { box.append(el('div', 'del', '- ' + a[i])); i++; }
  }
  return box;
}

// ---- permission cards ----

function card(f) {
  const t = threadOf(f.threadId);
  if (!t.view || t.view.cards.has(f.requestId)) return;
  const v = t.view;
  const tc0 = f.toolCall || {};
  const askedAt = f.createdAt ? Date.parse(f.createdAt) : null;
  let tc = toolFor(v, tc0.toolCallId, askedAt);
  if (!tc) {
    // The agent asked about a call it never announced: the question brings its own box.
    tc = newTool(v, tc0.toolCallId, askedAt);
    tc.data = { ...tc0 };
    renderToolBody(tc.body, tc.data);
  }
  tc.el.classList.add('card');
  tc.el.classList.remove('resolved');
  tc.el.dataset.requestId = f.requestId;
  const section = el('div', 'permission');
  section.append(el('div', 'ask', agentName(t.info.agent) + ' asks your permission'));
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
  const options = el('div', 'options');
  for (const [i, o] of (f.options || []).entries()) {
    const b = el('button', o.kind, o.name);
    b.dataset.optionId = o.optionId;
    if (i < 9) b.setAttribute('aria-keyshortcuts', 'Alt+' + (i + 1));
    // "Always" is the agent's to keep: say what it covers.
    if (o.kind === 'allow_always') b.title = 'Allow this kind of action for the rest of this session, as the agent defines it';
    if (o.kind === 'reject_always') b.title = 'Refuse this kind of action for the rest of this session';
    b.addEventListener('click', () => {
      options.querySelectorAll('button').forEach((x) => { x.disabled = true; });
      if (!send({ type: 'permission_answer', requestId: f.requestId, optionId: o.optionId })) {
        options.querySelectorAll('button').forEach((x) => { x.disabled = false; });
      } else {
        $('input').focus({ preventScroll: true }); // keep the keyboard where the person types
      }
    });
    options.append(b);
  }
  const n = Math.min(9, (f.options || []).length);
  const keys = el('div', 'keys', n ? 'Keys: Alt+1' + (n > 1 ? '…Alt+' + n : '') + ', in this order' : '');
  section.append(options, keys, el('div', 'verdict', 'Asked at ' + time(f.createdAt)));
  tc.el.append(section);
  v.cards.set(f.requestId, { el: tc.el, section, options: f.options || [] });
  v.agentMsg = null;
  // A question must be seen: bring it into view (the buttons above the composer).
  if (f.threadId === state.current && v.scrolled) {
    section.scrollIntoView({ block: 'nearest' });
    announce(agentName(t.info.agent) + ' asks your permission: ' + (tc0.title || 'a tool call'));
  }
}

// What a tool call will run, when its input says: the argv in full and where (agents differ in shape).
function commandOf(input) {
  if (!input || typeof input !== 'object') return null;
  let command = null;
  if (Array.isArray(input.command)) command = input.command.join(' ');
  else if (typeof input.command === 'string') {
    command = input.command + (Array.isArray(input.args) && input.args.length ? ' ' + input.args.join(' ') : '');
  } else if (typeof input.cmd === 'string') command = input.cmd;
  if (!command) return null;
  return { command, cwd: input.cwd || input.workdir || input.directory || null };
}

function resolved(f) {
  const t = threadOf(f.threadId);
  const c = t.view?.cards.get(f.requestId);
  if (!c) return;
  c.el.classList.remove('stale');
  c.el.classList.add('resolved');
  c.section.querySelectorAll('.options button').forEach((b) => { b.disabled = true; });
  const o = f.outcome || {};
  let text;
  if (o.outcome === 'selected') {
    const chosen = c.options.find((x) => x.optionId === o.optionId);
    c.section.querySelector('.options button[data-option-id="' + CSS.escape(o.optionId) + '"]')?.classList.add('chosen');
    const who = o.answeredBy ? (o.answeredBy.user ? o.answeredBy.user + ' on ' : '') + o.answeredBy.surface : 'someone';
    text = (chosen ? chosen.name : o.optionId) + ' — answered by ' + who + ' at ' + time(f.endedAt);
  } else {
    text = 'Cancelled: ' + reasonText(o.reason) + ' (' + time(f.endedAt) + ')';
  }
  c.section.querySelector('.verdict').textContent = text;
}

// Cluster mode: the node that keeps these requests' ledger left. Their cards stay, unanswerable and
// saying why, until it is back (answerable again) or their end arrives.
// An answer the gateway did not take (its node did not answer in time, say): the card stays
// answerable, its buttons usable again, and it says why. An ended request's card ends by itself.
function answerNotTaken(f) {
  for (const t of state.threads.values()) {
    const c = t.view?.cards?.get(f.requestId);
    if (!c || c.el.classList.contains('resolved') || c.el.classList.contains('stale')) continue;
    c.section.querySelectorAll('.options button').forEach((b) => { b.disabled = false; });
    c.section.querySelector('.verdict').textContent = 'Not taken: ' + (f.message || f.code) + '. Try again.';
  }
}

function stale(f) {
  const ids = new Set(f.requestIds || []);
  for (const t of state.threads.values()) {
    for (const [id, c] of t.view?.cards || []) {
      if (!ids.has(id) || c.el.classList.contains('resolved')) continue;
      c.el.classList.toggle('stale', !!f.stale);
      c.section.querySelectorAll('.options button').forEach((b) => { b.disabled = !!f.stale; });
      c.section.querySelector('.verdict').textContent = f.stale
        ? 'Cannot be answered now: ' + (f.reason || 'its node left the cluster')
        : 'Answerable again';
      if (t.info.threadId === state.current) c.section.scrollIntoView({ block: 'nearest' }); // the why, in view
    }
  }
}

// Keep the connection warm through proxies that close idle sockets.
setInterval(() => state.socket?.readyState === WebSocket.OPEN && state.socket.send('{"type":"ping"}'), 25000);

checkSession();
