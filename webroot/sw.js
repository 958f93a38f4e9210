// Switchboard's service worker (scope "/"): it shows the gateway's Web Push messages about
// permission cards while no page is looked at, closes them when their question ends, and opens the
// card when one is tapped. It caches nothing: the page always comes from the gateway.
//
// A push is JSON: {"type": "card" | "remind" | "escalate", requestId, threadId, title, body,
// deadline?, url} shows (or, for a reminder, shows again) the card's notification, tagged with its
// requestId; {"type": "end", requestId} closes it. docs/protocol-web.md, "Notifications".
'use strict';

self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

// The gateway's link, kept to this origin: "/#thread=…&request=…".
function ownUrl(url) {
  try {
    const u = new URL(url || '/', self.location.origin);
    return u.origin === self.location.origin ? u.pathname + u.search + u.hash : '/';
  } catch {
    return '/';
  }
}

async function closeTagged(tag) {
  for (const n of await self.registration.getNotifications({ tag })) n.close();
}

async function received(message) {
  if (message && message.type === 'end') {
    if (message.requestId) await closeTagged(String(message.requestId));
    return;
  }
  const card = message && ['card', 'remind', 'escalate'].includes(message.type) && message.requestId;
  if (!card) {
    // A push must show something (userVisibleOnly); one this page does not understand says so plainly.
    await self.registration.showNotification('Switchboard', { body: 'Something may need your answer.',
      tag: 'switchboard', data: { url: '/' } });
    return;
  }
  await self.registration.showNotification(message.title || 'Switchboard: permission needed', {
    body: message.body || '',
    tag: String(message.requestId),
    // A reminder of a question already shown rings again; the first one rings anyway.
    renotify: message.type !== 'card',
    requireInteraction: true,
    data: { url: ownUrl(message.url), requestId: String(message.requestId), threadId: message.threadId || null },
  });
}

self.addEventListener('push', (event) => {
  let message = null;
  try {
    message = event.data ? event.data.json() : null;
  } catch {
    message = null;
  }
  event.waitUntil(received(message));
});

// A tap: the page already open here is brought forward and told which card to show; else one opens.
async function clicked(notification) {
  const url = ownUrl(notification.data && notification.data.url);
  const windows = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
  const own = windows.filter((c) => new URL(c.url).origin === self.location.origin);
  const client = own.find((c) => c.focused) || own.find((c) => c.visibilityState === 'visible') || own[0];
  if (client) {
    client.postMessage({ type: 'open', url });
    try {
      await client.focus();
      return;
    } catch {
      // not allowed to focus it: open a window instead
    }
  }
  await self.clients.openWindow(url);
}

self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  event.waitUntil(clicked(event.notification));
});
