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

  // Copy the agent's connect line.
  for (const button of document.querySelectorAll("button[data-copy]")) {
    button.addEventListener("click", async () => {
      const text = document.getElementById(button.dataset.copy).textContent;
      await navigator.clipboard.writeText(text);
      button.textContent = button.dataset.copied;
    });
  }

  // Delete, Turn off, Remove, Revoke and Disconnect: without JavaScript a
  // page asks first; with it, a dialog asks, and Yes posts to the same
  // address the page's button would.
  for (const link of document.querySelectorAll("a[data-confirm]")) {
    link.addEventListener("click", (event) => {
      event.preventDefault();
      if (!window.confirm(link.dataset.confirm)) return;
      const form = document.createElement("form");
      form.method = "post";
      form.action = link.href;
      document.body.appendChild(form);
      form.submit();
    });
  }

  // Keyboard shortcuts on the inbox: j/k move between events, d is Done,
  // r is Remember, n a new event, / the search, ? the list of them. None
  // fires while typing in a field or with a modifier key held.
  const help = document.getElementById("shortcuts");
  if (help) {
    document.addEventListener("keydown", (event) => {
      const target = event.target;
      const typing = target instanceof HTMLElement && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
      if (typing || event.ctrlKey || event.metaKey || event.altKey) return;
      const cards = Array.from(document.querySelectorAll("article.card")).filter((card) => card.offsetParent !== null);
      const current = cards.indexOf(document.activeElement && document.activeElement.closest ? document.activeElement.closest("article.card") : null);
      const press = (selector) => {
        const button = current >= 0 ? cards[current].querySelector(selector) : null;
        if (button) button.click();
      };
      switch (event.key) {
        case "j":
        case "k": {
          if (cards.length === 0) return;
          const next = current < 0 ? 0 : Math.min(Math.max(current + (event.key === "j" ? 1 : -1), 0), cards.length - 1);
          cards[next].focus();
          cards[next].scrollIntoView({ block: "nearest" });
          break;
        }
        case "d": press("button.done"); break;
        case "r": press("button.remember"); break;
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
