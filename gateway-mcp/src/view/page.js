// The agent's in-chat inbox, an MCP App view (io.modelcontextprotocol/ui,
// 2026-01-26). It speaks JSON-RPC 2.0 with its host over postMessage: a
// bridge of a few lines, so that building Hado needs no JavaScript tooling.
// Every title, subtitle and source name is set as text (textContent),
// never as markup: sources are third parties. Nothing here loads from a
// network; the host relays every call to Hado's tools.
"use strict";
(() => {
  const data = JSON.parse(document.getElementById("hado-view").textContent);
  const PROTOCOL_VERSION = "2026-01-26";
  const root = document.documentElement;
  const state = {
    context: {},
    capabilities: {},
    inbox: null,
    // What the person answered here, by event id: "done" (the row offers
    // Undo) or "remembered" (the row offers Undo of Remember), with the
    // event as it was, so a Done row keeps its place after a refresh.
    answered: new Map(),
    status: { text: "", failed: false },
    appliedStyles: [],
  };

  // ---- The bridge: requests with ids, notifications without, to and from
  // the frame's parent only.
  let nextId = 1;
  const waiting = new Map();
  const send = (message) => window.parent.postMessage(message, "*");
  function request(method, params) {
    const id = nextId++;
    return new Promise((resolve, reject) => {
      waiting.set(id, { resolve, reject });
      send({ jsonrpc: "2.0", id, method, params });
    });
  }
  const notify = (method, params) => send({ jsonrpc: "2.0", method, params });

  window.addEventListener("message", (event) => {
    if (event.source !== window.parent) return;
    const message = event.data;
    if (!message || typeof message !== "object" || message.jsonrpc !== "2.0") return;
    if (typeof message.method === "string") {
      if (message.id !== undefined && message.id !== null) answer(message);
      else heard(message.method, message.params || {});
      return;
    }
    const pending = waiting.get(message.id);
    if (!pending) return;
    waiting.delete(message.id);
    if (message.error) pending.reject(message.error);
    else pending.resolve(message.result);
  });

  // What the host asks of the view.
  function answer(message) {
    if (message.method === "ui/resource-teardown" || message.method === "ping") {
      send({ jsonrpc: "2.0", id: message.id, result: {} });
    } else {
      send({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "method not found" } });
    }
  }

  // What the host tells the view.
  function heard(method, params) {
    if (method === "ui/notifications/tool-result") {
      shown(params);
    } else if (method === "ui/notifications/tool-cancelled") {
      say(words().view_failed, true);
    } else if (method === "ui/notifications/host-context-changed") {
      const before = [lang(), state.context.timeZone];
      Object.assign(state.context, params);
      applyContext();
      // A new theme needs no new page: the open menu and the focus stay.
      if (lang() !== before[0] || state.context.timeZone !== before[1]) render();
    }
    // tool-input carries show_inbox's arguments, of which there are none.
  }

  // ---- The person's words, in the host's language.
  function lang() {
    const locale = String(state.context.locale || navigator.language || "en");
    return /^ru(\b|[-_])/i.test(locale) ? "ru" : "en";
  }
  const words = () => data.words[lang()];
  const fill = (template, values) =>
    template.replace(/\{(\w+)\}/g, (whole, name) => (name in values ? values[name] : whole));

  // ---- The host's context: theme, style variables, language, frame size.
  const STYLE_NAME = /^--[a-zA-Z0-9-]{1,80}$/;
  // A value that would fetch something is not the host's colour or font.
  const FETCHES = /(url|src|image-set|expression)\s*\(/i;
  function applyContext() {
    const context = state.context;
    if (context.theme === "dark" || context.theme === "light") root.dataset.theme = context.theme;
    else delete root.dataset.theme;
    for (const name of state.appliedStyles) root.style.removeProperty(name);
    state.appliedStyles = [];
    const variables = context.styles && context.styles.variables;
    if (variables && typeof variables === "object") {
      for (const [name, value] of Object.entries(variables)) {
        if (STYLE_NAME.test(name) && typeof value === "string" && value.length <= 400 && !FETCHES.test(value)) {
          root.style.setProperty(name, value);
          state.appliedStyles.push(name);
        }
      }
    }
    root.lang = lang();
    const frame = context.containerDimensions || {};
    // A frame of fixed height scrolls inside; otherwise the page is as
    // tall as what it shows, up to the host's maximum.
    root.style.height = typeof frame.height === "number" ? `${frame.height}px` : "";
    root.style.maxHeight = typeof frame.maxHeight === "number" ? `${frame.maxHeight}px` : "";
    root.style.overflowY =
      typeof frame.height === "number" || typeof frame.maxHeight === "number" ? "auto" : "";
  }

  // ---- The page's size, told to the host whenever it changes.
  let lastSize = "";
  function reportSize() {
    const box = root.getBoundingClientRect();
    const width = Math.ceil(box.width);
    const height = Math.ceil(box.height);
    const size = `${width}x${height}`;
    if (size === lastSize) return;
    lastSize = size;
    notify("ui/notifications/size-changed", { width, height });
  }
  let sizePending = false;
  const sizeChanged = () => {
    if (sizePending) return;
    sizePending = true;
    requestAnimationFrame(() => {
      sizePending = false;
      reportSize();
    });
  };

  // ---- Calls to Hado's tools through the host.
  async function callTool(name, args, event) {
    let result;
    try {
      result = await request("tools/call", { name, arguments: args });
    } catch (error) {
      // A JSON-RPC error: Hado's core away (retry later), or the host's refusal.
      const away = error && error.code === -32000 && error.data && "retry_after" in error.data;
      throw new Error(away ? words().core_down : words().view_failed);
    }
    if (!result || result.isError) throw new Error(refusal(result, event));
    return result;
  }

  // A refusal's words, from the stable codes Hado puts after its reason:
  // "event 7 not found (EVENT_NOT_FOUND)".
  function refusal(result, event) {
    const text = ((result && result.content) || [])
      .map((block) => (block && block.type === "text" ? String(block.text) : ""))
      .join(" ");
    const found = text.match(/\(([^()]*)\)\s*$/);
    const codes = found ? found[1].split(";").map((code) => code.split(":").pop().trim()) : [];
    const w = words();
    if (codes.includes("EVENT_NOT_FOUND")) return w.event_not_found;
    if (codes.includes("EVENT_WITHDRAWN")) {
      return event && event.source === "manual"
        ? w.event_deleted
        : fill(w.event_withdrawn, { source: event ? event.source : "" });
    }
    return w.view_failed;
  }

  function shown(result) {
    if (result && result.isError) {
      say(refusal(result), true);
      return;
    }
    const inbox = result && result.structuredContent;
    if (inbox && Array.isArray(inbox.groups)) {
      state.inbox = inbox;
      say("");
      render();
    } else {
      refresh().catch((error) => say(error.message, true));
    }
  }

  async function refresh(focus) {
    const result = await callTool("show_inbox", {});
    if (result.structuredContent && Array.isArray(result.structuredContent.groups)) {
      state.inbox = result.structuredContent;
      // What the server now says wins: an event open again is no longer
      // Done here, one no longer quiet no longer Remembered.
      for (const [id, answered] of state.answered) {
        const now = findEvent(id);
        if (now && (answered.kind === "done" || !now.quiet_until)) state.answered.delete(id);
      }
    }
    render(focus);
  }

  function say(text, failed) {
    state.status = { text, failed: Boolean(failed) };
    const status = document.getElementById("status");
    status.textContent = text;
    status.classList.toggle("failed", Boolean(failed));
  }

  // Runs one of the person's answers: buttons wait, a failure says why.
  async function act(button, work) {
    const buttons = button.closest("li, .offer").querySelectorAll("button");
    buttons.forEach((each) => (each.disabled = true));
    try {
      await work();
    } catch (error) {
      say(error.message, true);
      buttons.forEach((each) => (each.disabled = false));
    }
  }

  function done(button, event, group) {
    return act(button, async () => {
      await callTool("mark_done", { id: event.id }, event);
      state.answered.set(event.id, { kind: "done", event, group });
      say(`${words().feedback_done} ${event.title}.`);
      render(`li[data-id="${event.id}"] button.undo`);
    });
  }

  function remember(button, event, until) {
    return act(button, async () => {
      const args = until ? { id: event.id, until } : { id: event.id };
      await callTool("mark_ack", args, event);
      state.answered.set(event.id, { kind: "remembered", event });
      await refresh(`li[data-id="${event.id}"] button.undo`);
      const now = findEvent(event.id) || event;
      const quiet = now.quiet_until_words ? ` · ${words().quiet_until} ${now.quiet_until_words[lang()]}` : "";
      say(`${words().feedback_remembered} ${event.title}${quiet}.`);
    });
  }

  function undo(button, event, kind) {
    return act(button, async () => {
      await callTool(kind === "done" ? "reopen_event" : "restore_reminders", { id: event.id }, event);
      state.answered.delete(event.id);
      await refresh(`li[data-id="${event.id}"] button.done`);
      const said = kind === "done" ? words().feedback_reopened : words().feedback_unremembered;
      say(`${said} ${event.title}.`);
    });
  }

  function setZone(button, zone) {
    return act(button, async () => {
      await callTool("update_profile", { tz: zone });
      await refresh();
      say(words().saved);
    });
  }

  function findEvent(id) {
    for (const group of (state.inbox && state.inbox.groups) || []) {
      for (const event of group.events) if (event.id === id) return event;
    }
    return null;
  }

  // ---- The page, built from the inbox as text nodes.
  function element(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function button(text, className, label, onPress) {
    const node = element("button", className, text);
    node.type = "button";
    if (label) node.setAttribute("aria-label", label);
    node.addEventListener("click", () => onPress(node));
    return node;
  }

  // Builds the page again; `focus` names the button that takes the focus
  // the pressed one had (a new page has none of the old buttons).
  function render(focus) {
    const w = words();
    const groups = document.getElementById("groups");
    const main = document.getElementById("inbox");
    groups.replaceChildren();
    if (!state.inbox) {
      if (!state.status.text) say(w.view_loading);
      return;
    }
    main.removeAttribute("aria-busy");
    renderOffer();
    let shownAny = false;
    for (const group of state.inbox.groups) {
      const events = group.events.slice();
      // Events answered Done here stay, with Undo, at the top of their group.
      for (const [id, answered] of state.answered) {
        if (answered.kind === "done" && answered.group === group.state && !events.some((e) => e.id === id)) {
          events.unshift(answered.event);
        }
      }
      if (events.length === 0) continue;
      shownAny = true;
      const section = element("section", `group ${group.state}`);
      const heading = element("h2", "", w[group.state] || group.state);
      // Done here leaves the group: the count says what is still open.
      const closedHere = group.events.filter((e) => (state.answered.get(e.id) || {}).kind === "done").length;
      const count = (typeof group.count === "number" ? group.count : group.events.length) - closedHere;
      heading.append(element("span", "count", String(count) + (group.more ? "+" : "")));
      section.append(heading);
      const list = element("ul");
      for (const event of events) list.append(row(event, group.state));
      section.append(list);
      if (group.more) section.append(element("p", "more", w.view_more));
      groups.append(section);
    }
    if (!shownAny) groups.append(element("p", "empty", w.nothing_due));
    const next = focus && document.querySelector(focus);
    if (next) next.focus();
  }

  function row(event, group) {
    const w = words();
    const answered = state.answered.get(event.id);
    const item = element("li", `event ${event.state}${event.needs_attention ? " attention" : ""}`);
    item.dataset.id = String(event.id);
    const what = element("div", "what");
    if (answered && answered.kind === "done") {
      item.className = "event answered";
      what.append(element("p", "title", `${w.feedback_done} ${event.title}`));
      item.append(what);
      item.append(button(w.undo, "undo", `${w.undo}: ${event.title}`, (node) => undo(node, event, "done")));
      return item;
    }
    what.append(element("p", "title", event.title));
    if (event.subtitle) what.append(element("p", "meta", event.subtitle));
    const meta = [event.when ? event.when[lang()] : event.due_at];
    if (event.source !== "manual") meta.push(`${w.from_source} ${event.source}`);
    if (event.quiet_until_words) meta.push(`${w.quiet_until} ${event.quiet_until_words[lang()]}`);
    what.append(element("p", "meta", meta.join(" · ")));
    item.append(what);
    const actions = element("div", "actions");
    actions.append(button(event.done_label, "done", `${event.done_label}: ${event.title}`, (node) => done(node, event, group)));
    if (answered && answered.kind === "remembered" && event.quiet_until) {
      actions.append(button(w.undo, "undo", `${w.undo}: ${event.title}`, (node) => undo(node, event, "remembered")));
    } else {
      actions.append(button(w.remember, "remember", `${w.remember}: ${event.title}`, (node) => remember(node, event)));
    }
    // Remember's other choices sit behind a second control.
    const until = element("details", "until");
    const summary = element("summary", "", "⋯");
    summary.setAttribute("aria-label", `${w.remember_more} ${event.title}`);
    const menu = element("div", "menu");
    menu.append(button(w.remember_tomorrow, "remember-tomorrow", "", (node) => remember(node, event, "tomorrow")));
    menu.append(button(w.remember_next_week, "remember-week", "", (node) => remember(node, event, "next_week")));
    if (event.deep_link && /^https?:/i.test(event.deep_link) && state.capabilities.openLinks) {
      menu.append(button(`${w.open_link} ↗`, "open", "", () => request("ui/open-link", { url: event.deep_link }).catch(() => say(w.view_failed, true))));
    }
    until.append(summary, menu);
    actions.append(until);
    item.append(actions);
    return item;
  }

  // The offer to take the zone the host says the person is in, while
  // theirs is still this Hado's default: one press, never by itself.
  function renderOffer() {
    const offer = document.getElementById("offer");
    const person = state.inbox.person;
    const device = state.context.timeZone;
    offer.replaceChildren();
    if (!person.tz_is_default || typeof device !== "string" || !device || device === person.tz) {
      offer.hidden = true;
      return;
    }
    const w = words();
    offer.hidden = false;
    offer.append(
      element("p", "", `${fill(w.zone_offer, { zone: person.tz })} ${fill(w.zone_offer_device, { device })}`),
    );
    const actions = element("div", "actions");
    actions.append(button(fill(w.zone_use, { zone: device }), "primary use-zone", "", (node) => setZone(node, device)));
    actions.append(button(fill(w.zone_keep, { zone: person.tz }), "keep-zone", "", (node) => setZone(node, person.tz)));
    offer.append(actions);
  }

  // ---- Start: the handshake, then the page waits for the tool's result.
  async function start() {
    applyContext();
    render();
    const observer = new ResizeObserver(sizeChanged);
    observer.observe(root);
    observer.observe(document.body);
    const initialized = await request("ui/initialize", {
      protocolVersion: PROTOCOL_VERSION,
      appInfo: { name: "Hado inbox", version: data.version },
      appCapabilities: { availableDisplayModes: ["inline"] },
    });
    state.context = Object.assign({}, (initialized && initialized.hostContext) || {});
    state.capabilities = (initialized && initialized.hostCapabilities) || {};
    applyContext();
    render();
    notify("ui/notifications/initialized", {});
    sizeChanged();
  }
  start().catch(() => say(words().view_failed, true));
})();
