// Hado's service worker: the offline page when the network is gone, and the
// reminders pushed to this device, with Done and Remember on them.
//
// Only the offline page and the files it needs are cached. Pages with events
// always come from the network: an inbox kept from earlier would show stale
// events as if they were current.
"use strict";

const ASSETS = "__ASSETS__";
const CACHE = "hado-offline-" + ASSETS;
const OFFLINE = "/static/offline.html";

self.addEventListener("install", (event) => {
  event.waitUntil(
    caches.open(CACHE)
      .then((cache) => cache.addAll([OFFLINE, "/static/hado.css?v=" + ASSETS, "/static/hado.js?v=" + ASSETS]))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches.keys()
      .then((names) => Promise.all(names.filter((name) => name !== CACHE).map((name) => caches.delete(name))))
      .then(() => self.clients.claim()),
  );
});

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.mode === "navigate") {
    event.respondWith(fetch(request).catch(() => caches.match(OFFLINE)));
  } else if (request.url.startsWith(self.location.origin + "/static/") && request.url.includes("?v=" + ASSETS)) {
    // This build's fingerprinted files, for the offline page; never events.
    event.respondWith(fetch(request).catch(() => caches.match(request)));
  }
});

// What a push says (core's delivery/push.rs): the title, the due moment in
// words, the state, the event's page, and Done and Remember with the signed
// links they post.
self.addEventListener("push", (event) => {
  let message;
  try {
    message = event.data.json();
  } catch {
    return;
  }
  // Only this inbox's own signed links are kept: a message that names
  // another site (a forged one, say) gets no action and opens the inbox.
  const offered = (message.actions || []).filter((action) => own(action.url, "/a/"));
  const actions = offered.map((action) => ({ action: action.action, title: action.title }));
  const links = Object.fromEntries(offered.map((action) => [action.action, own(action.url, "/a/")]));
  const body = [message.state_label, message.body].filter(Boolean).join(" · ");
  event.waitUntil(
    self.registration.showNotification(message.title, {
      body,
      tag: message.tag,
      renotify: Boolean(message.renotify),
      icon: "/static/icons/icon-192.png",
      actions,
      data: { url: own(message.url, "/") || "/", links },
    }),
  );
});

// Done and Remember post their signed link from here, with no page opening,
// then close the notification; a click anywhere else opens the event.
self.addEventListener("notificationclick", (event) => {
  const notification = event.notification;
  const data = notification.data || {};
  const link = event.action && data.links ? data.links[event.action] : undefined;
  notification.close();
  if (link) {
    event.waitUntil(act(link, notification));
    return;
  }
  event.waitUntil(openPage(own(data.url, "/") || "/"));
});

// `url` as an address on this inbox's own origin under `prefix`, or null.
function own(url, prefix) {
  try {
    const address = new URL(url, self.location.origin);
    return address.origin === self.location.origin && address.pathname.startsWith(prefix)
      ? address.href
      : null;
  } catch {
    return null;
  }
}

async function act(link, notification) {
  try {
    const reply = await fetch(link, { method: "POST", credentials: "omit", redirect: "manual" });
    if (reply.ok) return;
    // The link is out of date, expired or its event gone: its page says
    // so in the person's words. Only a failure worth trying again brings
    // the notification back.
    if (reply.status !== 429 && reply.status < 500) return openPage(link);
  } catch {
    // Offline: the notification comes back, so the press is not lost.
  }
  await self.registration.showNotification(notification.title, {
    body: notification.body,
    tag: notification.tag,
    icon: notification.icon,
    actions: notification.actions,
    data: notification.data,
  });
}

async function openPage(url) {
  const open = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
  for (const client of open) {
    if (client.url === url && "focus" in client) return client.focus();
  }
  return self.clients.openWindow(url);
}
