// A thread's events drawn in its log: people's and agents' messages (Markdown), thoughts, images
// and audio, one box per tool call, the plan, and the agent's modes, config options and usage.
import { $, el, announce } from './dom.js';
import { store, dispatch } from './state.js';
import { thread } from './store.js';
import { views } from './views.js';
import { send } from './socket.js';
import { markdown, addCopyButtons } from './markdown.js';
import {
  blockText, stopText, shortPath, exitText, agentExitedText, usageText, diffRows, isImage, isAudio, isPreview,
} from './format.js';

const isCurrent = (id) => id === store.state.current;

// An `event` frame of a thread the page shows, each seq once.
export function event(f) {
  const t = thread(store.state, f.threadId);
  const v = views.get(f.threadId);
  if (!v || !t || f.seq <= t.lastSeq) return;
  dispatch({ type: 'seq', threadId: f.threadId, seq: f.seq });
  const e = f.event;
  const stick = v.log.scrollHeight - v.log.scrollTop - v.log.clientHeight < 80;
  v.log.querySelector('.empty')?.remove();
  const last = v.log.lastElementChild;
  switch (e.kind) {
    case 'user_message': {
      v.agentMsg = null; v.thought = null; v.userMsg = null; v.tools = new Map();
      const m = el('div', 'msg user', e.text);
      if (typeof e.text === 'string' && e.text.trim()) v.lastUserText = e.text;
      if (e.images?.length) m.append(userImages(e.images));
      v.log.append(m);
      if (!t.info.title) {
        dispatch({ type: 'titled', threadId: f.threadId, title: e.text.slice(0, 60) || '(an image)' });
        if (isCurrent(f.threadId)) $('thread-title').textContent = thread(store.state, f.threadId).info.title;
      }
      break;
    }
    case 'prompt_capabilities':
      // Whether this thread's agent takes images: the attach button follows it (composer.js).
      dispatch({ type: 'images', threadId: f.threadId, image: e.image });
      break;
    case 'acp':
      update(f.threadId, v, e.update, f.at);
      break;
    case 'turn_started':
      // Tool call ids are the agent's and may come again in a later turn (a restarted agent reuses them),
      // and so may terminal ids.
      v.agentMsg = null; v.thought = null; v.userMsg = null; v.tools = new Map(); v.terminalOutputs = {};
      break;
    case 'turn_ended':
      v.agentMsg = null; v.thought = null; v.userMsg = null;
      if (isCurrent(f.threadId) && v.scrolled) announce('The agent finished its turn.');
      if (e.stopReason && e.stopReason !== 'end_turn') system(v, stopText(e.stopReason), e.stopReason === 'error');
      break;
    case 'agent_exited':
      v.agentMsg = null; v.userMsg = null;
      system(v, agentExitedText(e), true);
      break;
    case 'system': {
      const m = system(v, e.text, e.level === 'error');
      if (e.level === 'error' && Array.isArray(e.login) && e.login.length) m.append(loginHelp(f.threadId, v, e.login));
      break;
    }
    case 'session_modes':
      dispatch({ type: 'modes', threadId: f.threadId, modes: e.modes });
      if (isCurrent(f.threadId)) renderModes(f.threadId);
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
      dispatch({ type: 'config', threadId: f.threadId, configOptions: e.configOptions });
      if (isCurrent(f.threadId)) renderConfig(f.threadId);
      break;
  }
  // What this event drew carries its moment: a card that brings its own box is placed among them by time.
  if (f.at) {
    for (let n = last ? last.nextElementSibling : v.log.firstElementChild; n; n = n.nextElementSibling) {
      if (!n.dataset.at) n.dataset.at = String(f.at);
    }
  }
  if (stick) v.log.scrollTop = v.log.scrollHeight;
}

// A box made for a card (no tool call of the agent's named it) goes where its moment is among what the
// log drew: a replay sends ended cards after the whole history, which would put each question last.
export function placeByTime(log, box, at) {
  if (!Number.isFinite(at)) return;
  box.dataset.at = String(at);
  const later = [...log.children].find((n) => n !== box && Number(n.dataset.at) > at);
  if (later) later.before(box);
}

function system(v, text, isError) {
  const m = el('div', 'msg system' + (isError ? ' error' : ''), text);
  v.log.append(m);
  return m;
}

// A login the agent demands and offers in a terminal: each way's name, the exact command line to run
// on the gateway's host with a Copy button, and Try again (the person's last message, sent again).
function loginHelp(threadId, v, login) {
  const box = el('div', 'login-help');
  for (const entry of login) {
    if (!entry || typeof entry.command !== 'string' || !entry.command) continue;
    const name = typeof entry.name === 'string' && entry.name ? entry.name : 'Log in';
    const code = el('code', 'login-command', entry.command);
    const copy = el('button', 'login-copy', 'Copy');
    copy.type = 'button';
    copy.setAttribute('aria-label', 'Copy the command line: ' + name);
    const note = el('span', 'login-note');
    note.setAttribute('role', 'status');
    copy.addEventListener('click', () => copyCommand(code, copy, note));
    const actions = el('div', 'login-actions');
    actions.append(copy, note);
    const item = el('div', 'login-entry');
    item.append(el('span', 'login-name', name), code, actions);
    box.append(item);
  }
  const again = el('button', 'try-again', 'Try again');
  again.type = 'button';
  again.title = 'Send your last message again (once you have logged in)';
  again.hidden = !v.lastUserText; // nothing said yet: nothing to send again
  again.addEventListener('click', () => tryAgain(threadId, v, again));
  box.append(again);
  return box;
}

// The clipboard needs a secure context (https, localhost) and the browser's leave; without either, the
// command is selected for the person to copy.
async function copyCommand(code, button, note) {
  note.textContent = '';
  try {
    if (!navigator.clipboard?.writeText) throw new Error('no clipboard here');
    await navigator.clipboard.writeText(code.textContent);
    button.textContent = 'Copied';
    clearTimeout(button.copied);
    button.copied = setTimeout(() => { button.textContent = 'Copy'; }, 2000);
  } catch {
    const range = document.createRange();
    range.selectNodeContents(code);
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    note.textContent = 'Select and copy it: the browser did not let the page copy it.';
  }
}

// The thread's last message from the person, sent again as a new prompt (composer.js sends the same
// frame; a refusal brings the text back to the composer).
function tryAgain(threadId, v, button) {
  const text = v.lastUserText;
  if (!text) return;
  const frame = { type: 'prompt', threadId, text, clientRef: 'p-' + Date.now() };
  dispatch({ type: 'prompt_kept', prompt: { clientRef: frame.clientRef, threadId, text, attachments: [] } });
  if (send(frame)) {
    button.disabled = true;
    button.textContent = 'Sent again';
  }
}

function update(id, v, u, at) {
  switch (u.sessionUpdate) {
    case 'agent_message_chunk': {
      v.userMsg = null;
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
      v.userMsg = null;
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
    case 'user_message_chunk': {
      // The person's side of a session the agent replays (one begun elsewhere, loaded): drawn as a
      // message typed here is, as plain text, its chunks in one bubble; what the agent says next
      // starts a bubble of its own below it.
      v.agentMsg = null; v.thought = null;
      const text = blockText(u.content);
      if (!v.userMsg) {
        v.userMsg = el('div', 'msg user');
        v.log.append(v.userMsg);
        const t = thread(store.state, id);
        if (t && !t.info.title && text.trim()) {
          dispatch({ type: 'titled', threadId: id, title: text.trim().slice(0, 60) });
          if (isCurrent(id)) $('thread-title').textContent = thread(store.state, id).info.title;
        }
      }
      v.userMsg.textContent += text;
      break;
    }
    case 'tool_call':
    case 'tool_call_update':
      v.agentMsg = null; v.userMsg = null;
      toolCall(v, u, at);
      break;
    case 'plan':
      dispatch({ type: 'plan', threadId: id, entries: u.entries || [] });
      if (isCurrent(id)) renderPlan(id);
      break;
    case 'available_commands_update':
      // The agent's slash commands: offered as the person types "/".
      dispatch({ type: 'commands', threadId: id, commands: u.availableCommands || [] });
      break;
    case 'usage_update':
      // How full the agent's context window is (and what it cost, when it says).
      dispatch({ type: 'usage', threadId: id, usage: u });
      if (isCurrent(id)) renderUsage(id);
      break;
    case 'config_option_update':
      dispatch({ type: 'config', threadId: id, configOptions: u.configOptions || [] });
      if (isCurrent(id)) renderConfig(id);
      break;
    case 'current_mode_update':
      // The agent (or a person, in any tab) switched modes: the selector shows it.
      dispatch({ type: 'mode', threadId: id, modeId: u.currentModeId });
      if (isCurrent(id)) renderModes(id);
      break;
    default:
      break; // other kinds are not shown
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

function imageOf(mimeType, data) {
  if (!isImage(mimeType, data)) return null;
  const img = el('img');
  img.src = 'data:' + mimeType + ';base64,' + data;
  img.alt = 'An image from the agent';
  return img;
}

// An audio block as a player (data: URLs; the page's policy allows media from data: only).
function audioOf(mimeType, data) {
  if (!isAudio(mimeType, data)) return null;
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
    if (isPreview(i.preview)) {
      const img = el('img');
      img.src = i.preview;
      img.alt = 'Attached image (' + i.mimeType + ', ' + Math.round(i.bytes / 1024) + ' KB)';
      box.append(img);
    } else {
      box.append(el('span', 'image-note', '🖼 ' + i.mimeType + ', ' + Math.round(i.bytes / 1024) + ' KB'));
    }
  }
  return box;
}

// ---- the bar above the log: the open thread's modes, config options, usage and plan ----

// The agent's session modes (ACP), when it offers some: the current one selected, a change sent.
export function renderModes(id) {
  const t = thread(store.state, id);
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

$('mode').addEventListener('change', () => {
  const id = store.state.current;
  if (id) send({ type: 'set_mode', threadId: id, modeId: $('mode').value });
});

export function renderUsage(id) {
  const text = usageText(thread(store.state, id)?.usage);
  const box = $('usage');
  if (!text) { box.hidden = true; return; }
  box.textContent = text;
  box.title = 'How much of the agent\'s context window this session uses';
  box.hidden = false;
}

// The agent's session settings (ACP config options: model, reasoning, ...): one selector each.
// When one of them is the mode, it replaces the older mode selector (as ACP asks of clients).
export function renderConfig(id) {
  const box = $('config');
  const options = (thread(store.state, id)?.config || []).filter((c) => c.type === 'select' && Array.isArray(c.options));
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
      const current = store.state.current;
      if (current) send({ type: 'set_config', threadId: current, configId: c.id, value: select.value });
    });
    return select;
  }));
  if (options.some((c) => c.category === 'mode')) $('mode').hidden = true;
}

export function renderPlan(id) {
  const box = $('plan');
  const entries = views.has(id) ? thread(store.state, id)?.plan : null;
  if (!entries || !entries.length) { box.hidden = true; return; }
  const ol = el('ol');
  for (const p of entries) ol.append(el('li', p.status, p.content));
  box.replaceChildren(el('strong', null, 'Plan'), ol);
  box.hidden = false;
}

// ---- tool calls ----

// One box per tool call: its body (re-rendered as updates come) and, when the agent asks about it,
// the permission inside it (Zed's shape: the question where the call is, the diff shown once).
export function newTool(v, id, at) {
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
export function toolFor(v, toolCallId, askedAt) {
  let best = null;
  for (const tc of v.allTools) {
    if (tc.id === toolCallId && (tc.at == null || askedAt == null || tc.at <= askedAt + 1000)) best = tc;
  }
  return best;
}

export function renderToolBody(box, d, terminalOutputs = {}) {
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
      parts.push(el('pre', 'terminal', (done.truncated ? '…\n' : '') + (done.output || '')));
      parts.push(el('div', 'exit ' + ((done.exitStatus || {}).exitCode === 0 ? 'ok' : 'failed'), exitText(done.exitStatus)));
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

function diff(c) {
  return diffBox(shortPath(c.path), c.path, diffRows(c.oldText, c.newText));
}

// A diff as the page draws one: its path, then a line per row ({kind: 'add' | 'del' | … | null, text});
// an agent's proposed edit and a thread's changes (changes.js) look alike.
export function diffBox(path, title, rows) {
  const box = el('div', 'diff');
  if (path) {
    const p = el('div', 'path', path);
    if (title) p.title = title;
    box.append(p);
  }
  for (const row of rows) box.append(el('div', row.kind, row.text));
  return box;
}
