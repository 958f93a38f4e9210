// The views that take the open thread's place (Rules, Usage): one shows at a time, with the thread's
// log, composer, plan and project bar hidden until it closes.
import { $ } from './dom.js';
import { setMenu } from './menu.js';
import { showAudit } from './audit.js';
import { closeChanges } from './changes.js';

const PANELS = ['rules', 'usage-view'];

export function showPanel(id, title) {
  showAudit(false);
  closeChanges();
  for (const p of PANELS) $(p).hidden = p !== id;
  for (const part of ['log', 'composer', 'plan', 'project-bar']) $(part).hidden = true;
  $('thread-title').textContent = title;
  setMenu(false);
}

// Closes the panel if it shows; the thread's log and composer come back.
export function hidePanel(id) {
  if ($(id).hidden) return;
  $(id).hidden = true;
  $('log').hidden = false;
  $('composer').hidden = false;
}
