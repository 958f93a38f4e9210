// The thread menu (phones): Esc or a tap outside closes it; closed and off screen, it is inert
// (out of the tab order and of what screen readers see).
import { $ } from './dom.js';

const phone = window.matchMedia('(max-width: 760px)');

export function setMenu(open) {
  $('app').classList.toggle('menu-open', open);
  $('sidebar').inert = phone.matches && !open;
  $('menu').setAttribute('aria-expanded', String(open));
}

$('menu').addEventListener('click', () => setMenu(!$('app').classList.contains('menu-open')));
document.addEventListener('keydown', (ev) => { if (ev.key === 'Escape' && $('app').classList.contains('menu-open')) setMenu(false); });
document.addEventListener('pointerdown', (ev) => {
  if ($('app').classList.contains('menu-open') && !$('sidebar').contains(ev.target) && ev.target !== $('menu')) setMenu(false);
});
phone.addEventListener('change', () => setMenu(false));
setMenu(false);
