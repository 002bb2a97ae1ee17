// A host built on the official TypeScript SDK (the client most MCP hosts use),
// for mcptrunk's tests: it starts the command after "--" over stdio, runs the
// steps given as JSON in argv[2], and prints one JSON line per step. After
// each step it calls the healthy tool, to show the connection lives.
//
//   node tshost.mjs '{"healthy":"mcp__notes__echo","steps":[{"call":"mcp__chaos__huge","args":{"bytes":1024}}]}' -- mcptrunk serve --config c.json
//
// A step is {"call": tool, "args": {...}} or {"read": uri}. Each line says
// what the step got (ok, the result's size, isError, the error's message)
// and whether the healthy call after it was answered.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const plan = JSON.parse(process.argv[2]);
const sep = process.argv.indexOf("--");
const [command, ...args] = process.argv.slice(sep + 1);

const client = new Client({ name: "mcptrunk-tshost", version: "0" });
let closed = false;
const transport = new StdioClientTransport({ command, args, stderr: "ignore" });
transport.onclose = () => { closed = true; };
let logBytes = 0;
client.setNotificationHandler(
  (await import("@modelcontextprotocol/sdk/types.js")).LoggingMessageNotificationSchema,
  (n) => { logBytes += JSON.stringify(n.params).length; },
);
await client.connect(transport);

const timeout = { timeout: 120000 };
async function healthy() {
  try {
    const r = await client.callTool({ name: plan.healthy, arguments: { text: "alive" } }, undefined, timeout);
    return !r.isError;
  } catch {
    return false;
  }
}

for (const step of plan.steps) {
  const out = { step: step.call ?? step.read };
  try {
    const r = step.call
      ? await client.callTool({ name: step.call, arguments: step.args ?? {} }, undefined, timeout)
      : await client.readResource({ uri: step.read }, timeout);
    out.ok = true;
    out.isError = !!r.isError;
    const text = step.call ? (r.content?.[0]?.text ?? "") : (r.contents?.[0]?.text ?? "");
    out.bytes = text.length;
    out.text = text.slice(0, 400);
  } catch (e) {
    out.ok = false;
    out.error = String(e?.message ?? e).slice(0, 400);
  }
  out.healthy = await healthy();
  out.connected = !closed;
  out.logBytes = logBytes;
  process.stdout.write(JSON.stringify(out) + "\n");
}
await client.close();
