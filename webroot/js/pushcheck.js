// Web Push decisions and shapes: pure functions, no DOM or browser objects (Node's tests import
// this module). push.js asks the browser; these say what its answers mean.

// Why push cannot work on this device, in words, or null when it may. `env` is what the page sees:
// {secure: isSecureContext, serviceWorker, pushManager, notification: whether the APIs exist,
// permission: Notification.permission}.
export function pushProblem(env) {
  if (!env.secure) {
    return 'Push needs HTTPS. http://localhost works; a LAN address like http://192.168.x.y needs TLS '
      + '(a reverse proxy with a certificate) or a tunnel.';
  }
  if (!env.serviceWorker || !env.pushManager || !env.notification) {
    return 'This browser cannot receive Web Push here (it has no service worker or push support). On an '
      + 'iPhone or iPad, add Switchboard to the Home Screen (Share, then Add to Home Screen) and open it from there.';
  }
  if (env.permission === 'denied') return 'Notifications are blocked for this site in the browser settings.';
  return null;
}

// What Notification.requestPermission's answer means for turning push on (null: go on).
export function permissionProblem(permission) {
  if (permission === 'granted') return null;
  if (permission === 'denied') return 'Notifications are blocked for this site in the browser settings.';
  return 'Notifications were not allowed. Press Notify me again to be asked again.';
}

// The gateway's public key (base64url, no padding) as the bytes pushManager.subscribe takes.
export function keyBytes(base64url) {
  const s = String(base64url || '').replace(/-/g, '+').replace(/_/g, '/');
  const bin = atob(s + '='.repeat((4 - (s.length % 4)) % 4));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

// Whether a subscription was made with this key (its options.applicationServerKey, an ArrayBuffer
// or null): one made for a key the gateway no longer has reaches nobody.
export function sameKey(subscriptionKey, bytes) {
  if (!subscriptionKey) return false;
  const a = new Uint8Array(subscriptionKey);
  return a.length === bytes.length && a.every((x, i) => x === bytes[i]);
}

// The thread and card a link names: "#thread=<id>&request=<id>" (what a notification opens), or null.
export function readTarget(hashOrUrl) {
  const s = String(hashOrUrl || '');
  const i = s.indexOf('#');
  if (i < 0) return null;
  const p = new URLSearchParams(s.slice(i + 1));
  const threadId = p.get('thread');
  return threadId ? { threadId, requestId: p.get('request') || null } : null;
}

// `promise`, or a failure saying `what` did not answer within `ms` (a push service the browser cannot
// reach leaves a subscription waiting for ever).
export function within(promise, ms, what) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(what + ' did not answer within ' + Math.round(ms / 1000) + ' s')), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
