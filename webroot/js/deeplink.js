// A link to a thread and its card, "/#thread=<id>&request=<id>": what a notification opens (at load,
// or told by the service worker to a page already open). The thread opens once the page knows it
// (threads.js, goTo); the card is shown once the thread's history is in.
import { flash } from './dom.js';
import { views } from './views.js';
import { readTarget } from './pushcheck.js';

let target = readTarget(location.hash);
// Read once: a reload later lands where the person left, not on an old notification's card.
if (target) history.replaceState(null, '', location.pathname + location.search);

export const wanted = () => target;

export function want(t) {
  target = t;
}

// Scrolls to the wanted card of this thread and flashes it, once the thread's history is drawn (its
// attach ended). A card that already ended is shown as it ended; one not there, nothing.
export function reveal(threadId) {
  if (!target || target.threadId !== threadId) return;
  const v = views.get(threadId);
  if (!v || !v.scrolled) return; // landAtEnd comes back when the attach ends
  const c = target.requestId ? v.cards.get(target.requestId) : null;
  target = null;
  if (!c) return;
  c.el.scrollIntoView({ block: 'center' });
  c.section.scrollIntoView({ block: 'nearest' }); // its buttons too, on a short screen
  flash(c.el);
}
