// The menu's "Agent accounts": log an agent out of its own account (ACP logout, where it offers it;
// the gateway starts the agent for that alone). One line per configured agent; what happened is said
// under the list.
import { $, el } from './dom.js';
import { send } from './socket.js';

let seq = 0;
const waiting = new Map(); // clientRef -> { agent, button }

export function accounts(agents) {
  const list = $('accounts-list');
  list.replaceChildren(...(agents || []).map((a) => {
    const b = el('button', 'link', 'Log out');
    b.type = 'button';
    b.dataset.agentId = a.id;
    b.setAttribute('aria-label', 'Log out of ' + a.name);
    b.addEventListener('click', () => logout(a, b));
    const li = el('li');
    li.append(el('span', 'agent-name', a.name), b);
    return li;
  }));
}

function logout(agent, button) {
  const clientRef = 'logout-' + ++seq;
  if (!send({ type: 'agent_logout', agentId: agent.id, clientRef })) {
    say('Not connected to the gateway: try again once it is.', true);
    return;
  }
  waiting.set(clientRef, { agent, button });
  button.disabled = true;
  say('Logging out of ' + agent.name + '…');
}

export function logoutFrame(f) {
  const w = waiting.get(f.clientRef);
  if (!w) return;
  waiting.delete(f.clientRef);
  w.button.disabled = false;
  say(f.loggedOut ? 'Logged out of ' + w.agent.name + '.'
    : w.agent.name + ' offers no logout here: log out with its own command line.');
}

// True when the refusal was about a logout this page asked for (said under the list).
export function logoutRefused(f) {
  const w = waiting.get(f.clientRef);
  if (!w) return false;
  waiting.delete(f.clientRef);
  w.button.disabled = false;
  say('Could not log out of ' + w.agent.name + ': ' + (f.message || f.code), true);
  return true;
}

function say(text, isError) {
  const note = $('accounts-note');
  note.textContent = text;
  note.classList.toggle('error', !!isError);
}
