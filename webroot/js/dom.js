// The page's own elements and small DOM helpers.

// Found once at load: agent content (sanitized without ids or names anyway) can never stand in for
// one of them later. The log is the open thread's own and is swapped in by setLog.
const page = new Map([...document.querySelectorAll('[id]')].map((e) => [e.id, e]));
export const $ = (id) => page.get(id);

export function setLog(log) {
  $('log').replaceWith(log);
  page.set('log', log);
}

export function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = text;
  return e;
}

let toastTimer;
export function toast(text) {
  const t = $('toast');
  t.textContent = text;
  t.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { t.hidden = true; }, 4000);
}

// What a screen reader hears: moments, not every chunk (the log itself is not a live region).
export function announce(text) {
  $('announce').textContent = '';
  requestAnimationFrame(() => { $('announce').textContent = text; });
}

// Draws the eye to an element again (a card a notification opened, a reminder): its highlight replays.
export function flash(e) {
  e.classList.remove('flash');
  void e.offsetWidth; // a reflow, so the animation starts over
  e.classList.add('flash');
}
