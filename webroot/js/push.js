// Web Push on this device: the service worker (sw.js), registered at load where the browser can
// (registering asks the person nothing), and the menu's "Notify me" control, shown when the gateway
// can push (welcome's `push`). Only a click asks for permission and subscribes; "Turn off" undoes it.
// pushcheck.js says what the browser's answers mean; docs/protocol-web.md, "Notifications".
import { $ } from './dom.js';
import { send } from './socket.js';
import { keyBytes, permissionProblem, pushProblem, sameKey, within } from './pushcheck.js';

const DETAILS = 'sb.push.details'; // localStorage: show tool details on this device's lock screen

let key = null; // the gateway's applicationServerKey (bytes), while it offers push
let on = false; // whether the gateway took this device's subscription
let awaited = null; // {clientRef, endpoint} of the push_subscribe the page waits on
let seq = 0;
const SUBSCRIBE_MS = 30000;

const env = () => ({
  secure: window.isSecureContext,
  serviceWorker: 'serviceWorker' in navigator,
  pushManager: 'PushManager' in window,
  notification: 'Notification' in window,
  permission: 'Notification' in window ? Notification.permission : 'default',
});

const canRegister = window.isSecureContext && 'serviceWorker' in navigator;
const registered = canRegister
  ? navigator.serviceWorker.register('/sw.js').catch((e) => { console.warn('service worker not registered', e); return null; })
  : Promise.resolve(null);

// The registration once its worker is active (a subscription needs one); null where there is none.
async function activeRegistration() {
  return (await registered) ? navigator.serviceWorker.ready : null;
}

async function currentSubscription() {
  const reg = await registered;
  return reg ? reg.pushManager.getSubscription() : null;
}

const details = () => $('push-details').checked;

function render(note) {
  $('push').hidden = !key;
  $('push-on').hidden = on;
  $('push-off').hidden = !on;
  if (note !== undefined) $('push-note').textContent = note ?? '';
}

function busy(yes) {
  $('push-on').disabled = yes;
  $('push-off').disabled = yes;
}

// Tells the gateway of the subscription (again: it keeps one per endpoint).
function subscribeFrame(subscription) {
  const clientRef = 'push-' + ++seq;
  awaited = { clientRef, endpoint: subscription.endpoint };
  return send({ type: 'push_subscribe', subscription: subscription.toJSON(), details: details(), clientRef });
}

// welcome's `push` ({publicKey}) or its absence: the control shows when the gateway can push. A
// subscription this device already holds for the same key is sent again (nothing is asked).
export async function pushOffered(push) {
  key = push && push.publicKey ? keyBytes(push.publicKey) : null;
  on = false;
  render(null);
  if (!key) return;
  const problem = pushProblem(env());
  if (problem) { render(problem); return; }
  const subscription = await currentSubscription().catch(() => null);
  if (!subscription) return;
  if (!sameKey(subscription.options.applicationServerKey, key)) {
    render('Notifications were on for an earlier key of the gateway: press Notify me to turn them on again.');
  } else if (Notification.permission === 'granted') {
    subscribeFrame(subscription);
  }
}

async function turnOn() {
  const problem = pushProblem(env());
  if (problem) { render(problem); return; }
  busy(true);
  render('Turning notifications on\u2026');
  try {
    // Asked first, straight from the click: some browsers ask only from a person's gesture.
    const refused = permissionProblem(await Notification.requestPermission());
    if (refused) { render(refused); return; }
    const reg = await activeRegistration();
    if (!reg) { render('The service worker could not be registered, so this browser cannot show pushes.'); return; }
    let subscription = await reg.pushManager.getSubscription();
    if (subscription && !sameKey(subscription.options.applicationServerKey, key)) {
      await subscription.unsubscribe(); // made for a key the gateway no longer has
      subscription = null;
    }
    subscription ??= await within(reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key }),
      SUBSCRIBE_MS, "the browser's push service (is this device offline, or the service blocked here?)");
    if (!subscribeFrame(subscription)) render('Not connected to the gateway: press Notify me again once it is.');
  } catch (e) {
    render('Could not subscribe: ' + (e && e.message ? e.message : String(e)));
  } finally {
    busy(false);
  }
}

async function turnOff() {
  busy(true);
  try {
    const subscription = await currentSubscription();
    if (subscription) {
      send({ type: 'push_unsubscribe', endpoint: subscription.endpoint, clientRef: 'push-' + ++seq });
      await subscription.unsubscribe(); // a push sent to it after this reaches nobody
    }
    on = false;
    awaited = null;
    render('Notifications off for this device.');
  } catch (e) {
    render('Could not turn them off: ' + (e && e.message ? e.message : String(e)));
  } finally {
    busy(false);
  }
}

// push_subscribed: the gateway took this device's subscription.
export function pushSubscribed(f) {
  if (!awaited || f.endpoint !== awaited.endpoint) return;
  awaited = null;
  on = true;
  render('Notifications on for this device.');
}

export function pushUnsubscribed() {
  if (!on) return;
  on = false;
  render('Notifications off for this device.');
}

// An error frame about the page's push_subscribe: said in the control. True when it was.
export function pushRefused(f) {
  if (!awaited || f.clientRef == null || f.clientRef !== awaited.clientRef) return false;
  awaited = null;
  on = false;
  render('The gateway did not take the subscription: ' + (f.message || f.code));
  return true;
}

// Whether cards reach this device by push: then the page does not notify a second time.
export const pushesHere = () => on;

// A notification from the page itself (a hidden tab): through the service worker where there is one
// (a tap then opens the card, and phones allow no other kind), else the page's own.
export async function notifyHere(title, options) {
  if (!('Notification' in window) || Notification.permission !== 'granted' || on) return;
  try {
    const reg = await registered;
    if (reg && reg.active) await reg.showNotification(title, options);
    else new Notification(title, options);
  } catch (e) {
    console.warn('notification not shown', e);
  }
}

$('push-on').addEventListener('click', turnOn);
$('push-off').addEventListener('click', turnOff);
$('push-details').checked = localStorage.getItem(DETAILS) === 'true';
$('push-details').addEventListener('change', async () => {
  localStorage.setItem(DETAILS, String(details()));
  if (!on) return;
  const subscription = await currentSubscription().catch(() => null);
  if (subscription) subscribeFrame(subscription); // the gateway keeps the new choice
});
