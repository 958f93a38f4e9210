// The /ws/chat socket: connecting, reconnecting with backoff and jitter, and sending frames.
import { $, toast } from './dom.js';

let socket = null;
let retry = 0;
let handlers = null;

function setConn(text, cls) {
  const c = $('conn');
  c.textContent = text;
  c.className = 'conn ' + cls;
}

// Connects, and again whenever the connection drops. handlers: opened() once it is up, frame(f) for
// each frame, closed() when it went down, and refused() when it never opened and the login has ended.
export function connect(with_) {
  handlers = with_ || handlers;
  const url = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/ws/chat';
  const ws = new WebSocket(url);
  socket = ws;
  setConn('connecting…', '');
  let opened = false;
  ws.onopen = () => {
    opened = true;
    retry = 0;
    setConn('connected', 'up');
    handlers.opened();
  };
  ws.onmessage = (m) => handlers.frame(JSON.parse(m.data));
  ws.onclose = async (ev) => {
    if (socket !== ws) return;
    setConn('disconnected', 'down');
    handlers.closed();
    if (!opened) {
      const r = await fetch('/api/session', { credentials: 'same-origin' }).catch(() => null);
      if (r && r.status === 401) { handlers.refused(); return; }
    }
    if (ev.reason) toast(ev.reason);
    const delay = Math.min(15000, 500 * 2 ** retry++) * (0.75 + Math.random() / 2);
    setTimeout(() => connect(), delay);
  };
}

export const isOpen = () => !!socket && socket.readyState === WebSocket.OPEN;

export function send(frame) {
  if (isOpen()) {
    socket.send(JSON.stringify(frame));
    return true;
  }
  toast('Not connected; trying again…');
  return false;
}

export function disconnect() {
  if (socket) socket.close();
}

// Keep the connection warm through proxies that close idle sockets.
setInterval(() => isOpen() && socket.send('{"type":"ping"}'), 25000);
