// A small MCP Apps host: for each app the page is asked to show, it connects
// an MCP client to an endpoint (mcptrunk, or the app's server directly),
// calls the tool, reads the ui:// resource the tool names, renders it in a
// frame, and bridges the frame to the server with the ext-apps AppBridge.
// Then it does what a user would (clicks the app's button) and records what
// the app did and showed in window.report, which the test reads.
//
// The page's spec comes in the query (spec=) as JSON: {title, apps: [{label,
// mcp, tool, click, call, read: [selector...], shows: {selector: field of
// the call's structured answer}}]}.
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const spec = JSON.parse(new URLSearchParams(location.search).get("spec"));
const hostInfo = { name: "mcptrunk-apphost", version: "0" };
window.report = { done: false, apps: [] };
document.getElementById("title").textContent = spec.title;

async function sha256(text) {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

// until polls cond (a function of nothing) until it returns a truthy value.
async function until(what, cond, ms = 30000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = cond();
    if (v) return v;
    if (Date.now() > end) throw new Error("timed out waiting for " + what);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function show(app, box, state) {
  const rec = { label: app.label, calls: [], dom: {} };
  window.report.apps.push(rec);
  const step = (s) => { rec.step = s; state.textContent = s; };

  step("connecting to " + app.mcp);
  const client = new Client(hostInfo, {
    capabilities: { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } } },
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(app.mcp)));

  step("listing tools");
  const { tools } = await client.listTools();
  const tool = tools.find((t) => t.name === app.tool);
  if (!tool) throw new Error("no tool " + app.tool);
  rec.toolMeta = tool._meta ?? null;
  rec.resourceUri = tool._meta?.ui?.resourceUri;
  rec.visibility = tool._meta?.ui?.visibility ?? null;

  step("reading " + rec.resourceUri);
  const read = await client.readResource({ uri: rec.resourceUri });
  const content = read.contents[0];
  rec.contentUri = content.uri;
  rec.mimeType = content.mimeType;
  rec.htmlSHA256 = await sha256(content.text);

  step("calling " + app.tool);
  const result = await client.callTool({ name: app.tool, arguments: {} });
  rec.result = result.structuredContent ?? null;

  const frame = document.createElement("iframe");
  // allow-same-origin only so that this test host can read the app's DOM
  // and press its buttons as a user would.
  frame.sandbox = "allow-scripts allow-same-origin";
  frame.srcdoc = content.text;
  box.appendChild(frame);

  // The bridge forwards the app's own calls to the server through client
  // (the SDK's own forwarding, as a real host has it); record each.
  const request = client.request.bind(client);
  client.request = async (req, ...rest) => {
    if (req.method !== "tools/call") return request(req, ...rest);
    const call = { name: req.params.name };
    rec.calls.push(call);
    try {
      const res = await request(req, ...rest);
      call.isError = !!res.isError;
      call.result = res.structuredContent ?? null;
      return res;
    } catch (e) {
      call.error = String(e.message ?? e);
      throw e;
    }
  };
  const bridge = new AppBridge(client, hostInfo, { serverTools: {}, logging: {}, openLinks: {} });
  const initialized = new Promise((resolve) => { bridge.oninitialized = resolve; });
  step("waiting for the app");
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  await initialized;
  await bridge.sendToolInput({ arguments: {} });
  await bridge.sendToolResult(result);
  rec.initialized = true;

  const doc = () => frame.contentDocument;
  step("pressing " + app.click);
  await until(app.click, () => doc()?.querySelector(app.click));
  doc().querySelector(app.click).click();
  await until("the app's call of " + app.call, () => rec.calls.find((c) => c.name === app.call && (c.result || c.error || c.isError)));
  // The app shows the answer once it has it: wait until every selector read
  // shows something, and each of app.shows the field of the call's answer.
  const answer = () => rec.calls.findLast((c) => c.name === app.call && c.result)?.result ?? {};
  const text = (sel) => doc().querySelector(sel)?.textContent?.trim();
  await until("the app to show the answer", () =>
    app.read.every((sel) => text(sel) && !/^(--|Loading\.\.\.)/.test(text(sel))) &&
    Object.entries(app.shows ?? {}).every(([sel, field]) => text(sel) === String(answer()[field])));
  for (const sel of app.read) rec.dom[sel] = doc().querySelector(sel).textContent.trim();
  step("done");
}

const boxes = spec.apps.map((app) => {
  const box = document.createElement("section");
  box.className = "app";
  box.innerHTML = "<h2></h2><div class=state></div>";
  box.querySelector("h2").textContent = app.label;
  document.getElementById("apps").appendChild(box);
  return box;
});
Promise.allSettled(spec.apps.map((app, i) => show(app, boxes[i], boxes[i].querySelector(".state")).catch((e) => {
  window.report.apps.find((r) => r.label === app.label).error = String(e.message ?? e);
  throw e;
}))).then(() => { window.report.done = true; });
