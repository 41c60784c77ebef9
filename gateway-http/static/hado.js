// A little help on top of pages that work without JavaScript.
document.addEventListener("DOMContentLoaded", () => {
  // Preselect the browser's time zone while the saved one is still the default.
  const zone = document.querySelector("input[name=tz][data-browser-zone=yes]");
  const browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  if (zone && browserZone && zone.value !== browserZone) {
    zone.value = browserZone;
    // Say so: it is this browser's zone, not yet the saved one.
    const unsaved = document.getElementById("tz-unsaved");
    if (unsaved) unsaved.hidden = false;
  }

  // The offer every page makes while the saved zone is still the default:
  // this browser's zone, in one press; nothing when the two are the same.
  const offer = document.querySelector(".zone-offer form");
  if (offer && browserZone) {
    if (browserZone === offer.dataset.zone) {
      offer.parentElement.hidden = true;
    } else {
      const use = offer.querySelector("button.use-zone");
      use.value = browserZone;
      use.textContent = offer.dataset.use.replace("{zone}", browserZone);
      use.hidden = false;
      const device = offer.querySelector(".device");
      device.textContent = offer.dataset.device.replace("{device}", browserZone);
      device.hidden = false;
    }
  }

  // Quick add: as the person types one line, the form's fields fill from
  // it (the same reading as the Fill in button's, from /new/read); they stay
  // the person's to change before saving.
  const line = document.getElementById("line");
  const eventForm = document.querySelector("form.event-form");
  if (line && eventForm) {
    let waiting;
    const fill = async () => {
      const reply = await fetch("/new/read?line=" + encodeURIComponent(line.value), { headers: { Accept: "application/json" } });
      if (!reply.ok) return;
      const read = await reply.json();
      for (const name of ["title", "due_date", "due_time", "fire_date"]) {
        const field = eventForm.elements[name];
        if (field) field.value = read[name];
      }
      const said = document.getElementById("line-read");
      if (said) said.hidden = line.value.trim() === "";
    };
    line.addEventListener("input", () => {
      clearTimeout(waiting);
      waiting = setTimeout(fill, 200);
    });
    // Enter in the line goes on to the form instead of reloading the page.
    line.form.addEventListener("submit", async (event) => {
      event.preventDefault();
      clearTimeout(waiting);
      await fill();
      eventForm.elements.title.focus();
    });
  }

  // Copy the agent's connect line.
  for (const button of document.querySelectorAll("button[data-copy]")) {
    button.addEventListener("click", async () => {
      const text = document.getElementById(button.dataset.copy).textContent;
      await navigator.clipboard.writeText(text);
      button.textContent = button.dataset.copied;
    });
  }

  // Delete, Turn off, Remove, Revoke and Disconnect: without JavaScript a
  // page asks first; with it, a dialog asks, naming what it is about, and
  // its button posts to the same address the page's button would.
  const dialog = document.getElementById("confirm");
  const ask = (link) => {
    if (!dialog) return;
    dialog.querySelector("h2").textContent = link.dataset.confirm;
    const subject = dialog.querySelector(".subject");
    subject.querySelector("strong").textContent = link.dataset.subject || "";
    subject.hidden = !link.dataset.subject;
    const detail = dialog.querySelector(".detail");
    detail.textContent = link.dataset.detail || "";
    detail.hidden = !link.dataset.detail;
    const form = dialog.querySelector("form");
    form.action = link.href;
    form.querySelector("button.danger").textContent = link.dataset.button || link.textContent.replace("…", "");
    dialog.showModal();
  };
  if (dialog) {
    dialog.querySelector("button.cancel").addEventListener("click", () => dialog.close());
  }
  for (const link of document.querySelectorAll("a[data-confirm]")) {
    link.addEventListener("click", (event) => {
      if (!dialog) return;
      event.preventDefault();
      ask(link);
    });
  }

  // Keyboard shortcuts on the inbox (the help overlay lists them): j/k move
  // between events, d is Done, r Remember, x Delete, e Edit, o the event's
  // page, z undoes the last answer, n a new event, / the search, ? the list
  // of them and Esc closes it. None fires while typing in a field or with a
  // modifier key held. After an answer the next event has the focus.
  const help = document.getElementById("shortcuts");
  if (help) {
    const visible = () => Array.from(document.querySelectorAll("article.card")).filter((card) => card.offsetParent !== null);
    const focusCard = (card) => {
      card.focus();
      card.scrollIntoView({ block: "nearest" });
    };
    // Where the last answer left the person: the card after the one answered.
    const next = sessionStorage.getItem("hado-next");
    sessionStorage.removeItem("hado-next");
    if (next) {
      const card = document.getElementById(next);
      // After the page has loaded: the browser focuses the card the address
      // names (#event-…) as it scrolls to it, which would win otherwise.
      if (card && card.offsetParent !== null) {
        window.addEventListener("load", () => setTimeout(() => focusCard(card), 0));
      }
    }
    // Answering a card by mouse or keyboard marks the card after it as where to come back to.
    const markNext = (card) => {
      const cards = visible();
      const index = cards.indexOf(card);
      const after = cards[index + 1] || cards[index - 1];
      if (after) sessionStorage.setItem("hado-next", after.id);
    };
    for (const card of document.querySelectorAll("article.card")) {
      const form = card.querySelector("form.actions");
      if (form) form.addEventListener("submit", () => markNext(card));
    }
    document.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && !help.hidden) {
        help.hidden = true;
        event.preventDefault();
        return;
      }
      const target = event.target;
      const typing = target instanceof HTMLElement && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
      if (typing || event.ctrlKey || event.metaKey || event.altKey || (dialog && dialog.open)) return;
      const cards = visible();
      const card = document.activeElement && document.activeElement.closest ? document.activeElement.closest("article.card") : null;
      const current = cards.indexOf(card);
      const press = (selector) => {
        const button = current >= 0 ? cards[current].querySelector(selector) : null;
        if (!button) return;
        if (button.tagName === "A" && button.dataset.confirm) {
          markNext(cards[current]);
          ask(button);
        } else {
          button.click();
        }
      };
      switch (event.key) {
        case "j":
        case "k": {
          if (cards.length === 0) return;
          const to = current < 0 ? 0 : Math.min(Math.max(current + (event.key === "j" ? 1 : -1), 0), cards.length - 1);
          focusCard(cards[to]);
          break;
        }
        case "d": press("button.done"); break;
        case "r": press("button.remember"); break;
        case "x": press("a.delete"); break;
        case "e": press("a.edit"); break;
        case "o": press("a.details"); break;
        case "z": {
          const undo = document.querySelector(".feedback form button");
          if (undo) undo.click();
          break;
        }
        case "n": window.location.href = "/new"; break;
        case "/": {
          const search = document.getElementById("q");
          if (search) search.focus();
          break;
        }
        case "?": help.hidden = !help.hidden; break;
        default: return;
      }
      event.preventDefault();
    });
  }
});

// The service worker: the offline page, and reminders on this device.
if ("serviceWorker" in navigator) {
  navigator.serviceWorker.register("/sw.js", { scope: "/" }).catch(() => {});
}

// Notifications on this device: the browser asks for permission on the
// button's click, never on load; then this device subscribes with the
// server's key and its subscription goes to /me/push.
document.addEventListener("DOMContentLoaded", () => {
  const button = document.getElementById("push-on");
  if (!button) return;
  const said = document.getElementById("push-said");
  const say = (text) => {
    said.textContent = text;
    said.hidden = false;
  };
  button.addEventListener("click", async () => {
    if (!("serviceWorker" in navigator) || !("PushManager" in window) || !("Notification" in window)) {
      say(button.dataset.unsupported);
      return;
    }
    if ((await Notification.requestPermission()) !== "granted") {
      say(button.dataset.blocked);
      return;
    }
    try {
      const registration = await navigator.serviceWorker.ready;
      const base64 = button.dataset.key.replace(/-/g, "+").replace(/_/g, "/");
      const key = Uint8Array.from(atob(base64), (character) => character.charCodeAt(0));
      // A subscription made for another server key (the operator changed
      // it) is refused by its push service: it is replaced, not reused.
      let subscription = await registration.pushManager.getSubscription();
      const made = subscription && subscription.options.applicationServerKey;
      const same = made && made.byteLength === key.length
        && new Uint8Array(made).every((byte, index) => byte === key[index]);
      if (made && !same) {
        await subscription.unsubscribe();
        subscription = null;
      }
      subscription = subscription
        || (await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key }));
      const reply = await fetch("/me/push", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(subscription.toJSON()),
      });
      if (!reply.ok) {
        const problem = await reply.json().catch(() => ({}));
        say(button.dataset.failed + " " + (problem.error || reply.status));
        return;
      }
      // The new device shows in the list.
      location.reload();
    } catch (error) {
      say(button.dataset.failed + " " + error.message);
    }
  });
});
