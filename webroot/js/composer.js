// The composer: the draft, images attached (button, paste or drop; scaled to fit a frame), the
// agent's slash commands as the person types "/", sending (or keeping what was typed while the
// socket is down), and Stop.
import { $, el, toast } from './dom.js';
import { store, dispatch } from './state.js';
import { thread } from './store.js';
import { views } from './views.js';
import { isOpen, send } from './socket.js';
import { base64Bytes, commandsMatching, composerHint } from './format.js';

// Images: scaled down in the page when too large for a message (the gateway takes 700 KB an
// image), each with a small preview the transcript keeps.
const MAX_IMAGES = 4;
const MAX_IMAGE_BYTES = 700 * 1024;
const MAX_IMAGE_PIXELS = 40_000_000; // the gateway's bound on what an image declares

// Prompts typed while disconnected: { frame, shown }, sent once the page has re-attached.
const unsent = [];

// The attach button and the images for the next message follow the store.
store.subscribe((s, before) => {
  if (s.attachments !== before.attachments) renderAttachments(s);
  if (s.current !== before.current || s.agentImages !== before.agentImages
      || thread(s, s.current)?.images !== thread(before, s.current)?.images) renderAttachButton(s);
});

function renderAttachButton(s) {
  const t = s.current && thread(s, s.current);
  const takes = t ? (t.images ?? s.agentImages[t.info.agent]) : undefined;
  // Hidden only where the agent said it takes none; before its first start nobody knows.
  $('attach').hidden = takes === false;
}

function renderAttachments(s) {
  const box = $('attachments');
  box.hidden = s.attachments.length === 0;
  box.replaceChildren(...s.attachments.map((a, i) => {
    const item = el('span', 'attachment');
    const img = el('img');
    img.src = a.preview;
    img.alt = a.name;
    const remove = el('button', 'remove', '×');
    remove.type = 'button';
    remove.setAttribute('aria-label', 'Remove ' + a.name);
    remove.addEventListener('click', () => {
      dispatch({ type: 'attachments', attachments: store.state.attachments.filter((x, j) => j !== i) });
      $('input').focus();
    });
    item.append(img, remove);
    return item;
  }));
}

const clearAttachments = () => dispatch({ type: 'attachments', attachments: [] });

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

async function addImages(files) {
  for (const file of files) {
    if (store.state.attachments.length >= MAX_IMAGES) { toast('At most ' + MAX_IMAGES + ' images a message.'); break; }
    if (!/^image\/(png|jpeg|gif|webp)$/.test(file.type)) { toast(file.name + ': only PNG, JPEG, GIF and WebP images.'); continue; }
    try {
      let url = await readAsDataUrl(file);
      const img = await loadImage(url);
      // Too many pixels for the gateway, however few bytes: drawn smaller first.
      if (img.naturalWidth * img.naturalHeight > MAX_IMAGE_PIXELS) url = drawn(img, 1600, 'image/jpeg', 0.85);
      // Too large: smaller and smaller JPEGs until one fits (a model sees no more than ~1,600 px anyway).
      for (let side = 1600; base64Bytes(url) > MAX_IMAGE_BYTES && side >= 200; side = Math.round(side * 0.7)) {
        url = drawn(img, side, 'image/jpeg', 0.85);
      }
      if (base64Bytes(url) > MAX_IMAGE_BYTES) { toast(file.name + ' is too large to send.'); continue; }
      const mimeType = url.slice(5, url.indexOf(';'));
      const image = { mimeType, data: url.slice(url.indexOf(',') + 1), preview: drawn(img, 240, 'image/jpeg', 0.7),
        name: file.name || 'pasted image' };
      dispatch({ type: 'attachments', attachments: [...store.state.attachments, image] });
    } catch (err) {
      toast((file.name || 'The image') + ': ' + err.message);
    }
  }
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
  const { current, attachments } = store.state;
  if ((!text.trim() && !attachments.length) || !current) return;
  const frame = { type: 'prompt', threadId: current, text, clientRef: 'p-' + Date.now() };
  if (attachments.length) {
    frame.images = attachments.map(({ mimeType, data, preview }) => ({ mimeType, data, preview }));
    if (!(await fitImages(frame))) {
      toast('The message is too large to send; remove an image or some text.');
      return; // the draft and its images stay
    }
  }
  dispatch({ type: 'prompt_kept', prompt: { clientRef: frame.clientRef, threadId: current, text, attachments } });
  if (!isOpen()) {
    // Not lost: shown as waiting, and sent as soon as the connection is back.
    const shown = el('div', 'msg user unsent', text);
    shown.append(el('span', 'unsent-note', ' (waiting for the connection)'));
    views.get(current)?.log.append(shown);
    unsent.push({ frame, shown });
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

// What was typed while disconnected, once the page has re-attached (its own user_message event shows it).
export function sendUnsent() {
  for (const { frame, shown } of unsent.splice(0)) {
    if (send(frame)) shown.remove();
  }
}

// A prompt the server refused comes back to the composer, text and images: nothing typed is lost.
export function promptRefused(f) {
  const { lastPrompt, current, attachments } = store.state;
  if (f.clientRef && f.clientRef === lastPrompt?.clientRef && current === lastPrompt.threadId
    && !$('input').value && !attachments.length) {
    $('input').value = lastPrompt.text;
    dispatch({ type: 'attachments', attachments: lastPrompt.attachments });
  }
}

// The agent's slash commands, offered while the draft is "/" and a word: click (or Tab) completes.
export function renderCommands() {
  const menu = $('commands');
  const current = store.state.current;
  const matching = current ? commandsMatching($('input').value, thread(store.state, current)?.commands) : [];
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
const sayWhatEnterDoes = () => { $('input').placeholder = composerHint(touch.matches); };
sayWhatEnterDoes();
touch.addEventListener('change', sayWhatEnterDoes);
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

$('stop').addEventListener('click', () => store.state.current && send({ type: 'cancel', threadId: store.state.current }));
