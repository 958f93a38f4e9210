// The sidebar's gateway facts: the agent processes (GET /api/agents) and who knocked at a plugin
// without being let in (GET /api/knocks).
import { $, el } from './dom.js';

// The agent processes: how many run of how many allowed, their memory, prompts waiting for a slot.
let poolAsked = 0;
export async function refreshPool() {
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
export async function refreshKnocks() {
  const r = await fetch('/api/knocks', { credentials: 'same-origin' }).catch(() => null);
  if (!r || !r.ok) return;
  const knocks = (await r.json()).knocks;
  $('knocks').hidden = knocks.length === 0;
  $('knock-list').replaceChildren(...knocks.slice().reverse().map((k) => el('li', null,
    (k.name ? k.name + ' ' : '') + '(' + k.userId + ') on ' + k.plugin + ', ' + new Date(k.at).toLocaleString())));
}
setInterval(() => { if (!$('app').hidden && !document.hidden) refreshKnocks(); }, 30000);
