// A chat host that shows MCP Apps, built on the official host side of
// @modelcontextprotocol/ext-apps (AppBridge, PostMessageTransport) and the
// official MCP client: the model's session calls show_inbox on the 2025
// protocol; the view's own session, on the 2026-07-28 revision (stateless),
// carries the view's tool calls. The view runs in a sandbox proxy on
// another origin. Bundled for the browser at test time (esbuild); what the
// browser test reads and does goes through `window.hostTest`.
import {
  AppBridge,
  PostMessageTransport,
  RESOURCE_MIME_TYPE,
  getToolUiResourceUri,
} from "@modelcontextprotocol/ext-apps/app-bridge";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const query = new URLSearchParams(location.search);
const test = (window.hostTest = { ready: false, sizes: [], failures: [], initialized: null });
const me = { name: "hado-test-host", version: "1.0.0" };
const endpoint = new URL("/mcp", location.href);
const capabilities = { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: [RESOURCE_MIME_TYPE] } } };

// Each theme's colours as a host gives them: the standard variables, with
// light-dark() so one set serves both.
const variables = {
  "--color-background-primary": "light-dark(#fdfcf8, #17171c)",
  "--color-background-secondary": "light-dark(#ffffff, #222229)",
  "--color-text-primary": "light-dark(#1a1a1a, #f1f1f4)",
  "--color-text-secondary": "light-dark(#5f5f66, #a9a9b3)",
  "--color-border-secondary": "light-dark(#e4e2da, #34343d)",
  "--font-sans": "\"DejaVu Sans\", system-ui, sans-serif",
};

async function connect(options) {
  const client = new Client(me, { capabilities, ...options });
  await client.connect(new StreamableHTTPClientTransport(endpoint));
  return client;
}

function sandboxReady(frame) {
  return new Promise((resolve) => {
    const listener = (event) => {
      if (event.source === frame.contentWindow && event.data && event.data.method === "ui/notifications/sandbox-proxy-ready") {
        window.removeEventListener("message", listener);
        resolve();
      }
    };
    window.addEventListener("message", listener);
  });
}

async function main() {
  const theme = query.get("theme") || "light";
  document.body.classList.toggle("dark", theme === "dark");
  const model = await connect({});
  const viewSession = await connect({ versionNegotiation: { mode: { pin: "2026-07-28" } } });
  test.protocols = { model: model.getNegotiatedProtocolVersion?.() ?? null, view: viewSession.getNegotiatedProtocolVersion?.() ?? null };

  const { tools } = await model.listTools();
  const tool = tools.find((each) => each.name === "show_inbox");
  const uri = getToolUiResourceUri(tool);
  const read = await model.readResource({ uri });
  const content = read.contents[0];
  if (read.contents.length !== 1 || content.mimeType !== RESOURCE_MIME_TYPE) {
    throw new Error(`the view reads as ${JSON.stringify(read.contents.map((c) => c.mimeType))}`);
  }
  test.resourceMeta = content._meta || null;
  const result = model.callTool({ name: "show_inbox", arguments: {} });

  const frame = document.getElementById("view");
  const ready = sandboxReady(frame);
  frame.src = `http://localhost:${location.port}/sandbox.html`;
  await ready;

  const context = {
    theme,
    locale: query.get("locale") || "en-US",
    timeZone: query.get("tz") || "UTC",
    styles: { variables },
    displayMode: "inline",
    availableDisplayModes: ["inline"],
    platform: "web",
    containerDimensions: { maxHeight: 6000 },
  };
  const bridge = new AppBridge(viewSession, me, { openLinks: {}, serverTools: {}, serverResources: {} }, { hostContext: context });
  bridge.onsizechange = ({ width, height }) => {
    test.sizes.push({ width, height });
    if (typeof height === "number") frame.style.height = `${height}px`;
  };
  bridge.onopenlink = async () => ({});
  bridge.onloggingmessage = () => {};
  const initialized = new Promise((resolve) => (bridge.oninitialized = resolve));
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  await bridge.sendSandboxResourceReady({ html: content.text });
  await initialized;
  test.initialized = { app: bridge.getAppVersion(), capabilities: bridge.getAppCapabilities() };
  await bridge.sendToolInput({ arguments: {} });
  await bridge.sendToolResult(await result);

  let current = context;
  test.setTheme = (next) => {
    current = { ...current, theme: next };
    document.body.classList.toggle("dark", next === "dark");
    bridge.setHostContext(current);
  };
  test.callTool = (name, args) => model.callTool({ name, arguments: args });
  test.ready = true;
}

main().catch((error) => test.failures.push(String((error && error.stack) || error)));
