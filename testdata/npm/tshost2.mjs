// A host built on the TypeScript SDK v2 client (@modelcontextprotocol/client),
// for mcptrunk's tests of the 2026-07-28 revision: it starts the command after
// "--" over stdio, negotiates as the plan says, runs the steps, and prints one
// JSON line for the connection and then one per step.
//
//   node tshost2.mjs '{"pin":"2026-07-28","steps":[{"list":"tools"},{"call":"mcp__notes__echo","args":{"text":"hi"}}]}' -- mcptrunk serve --config c.json
//
// "pin" is the one revision the host accepts: server/discover must offer it,
// and there is no fallback to initialize (a strict host may do that). Without
// "pin" the host negotiates with "mode" ("auto" or "legacy", default "auto").
//
// A step is {"list": "tools"|"prompts"|"resources"|"templates"},
// {"call": tool, "args": {...}}, {"read": uri}, {"prompt": name, "args": {...}} or
// {"skills": "verify"}: the SDK's SkillsClient lists the skills, gets each by
// its URI, and reads every file of each, verifying its size and digest (and
// SKILL.md's frontmatter) against the entry; the line's names are the skills'
// URIs and its text the URIs of the files verified.
// The first line is {"connected": bool, "protocolVersion": ..., "era": ...,
// "error": ...}; a host that cannot connect prints only that line and exits 3.
// Each step's line says what it got: ok, the names for a list, the text of a
// result, isError, or the error's message and code.
//
// Elicitation is always accepted with {"name": "Ada", ...} (a value for every
// required property, like the go-sdk test host), sampling answers
// "sampled: <prompt>", and roots are one fixed root; on 2026-07-28 the SDK
// fulfils input_required results through these same handlers.
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { SkillsClient } from "@modelcontextprotocol/client/ext/skills";

const plan = JSON.parse(process.argv[2]);
const sep = process.argv.indexOf("--");
const [command, ...args] = process.argv.slice(sep + 1);

const negotiation = plan.pin ? { mode: { pin: plan.pin } } : { mode: plan.mode ?? "auto" };
const client = new Client(
  { name: "mcptrunk-tshost2", version: "0" },
  {
    capabilities: { elicitation: { form: {} }, sampling: {}, roots: { listChanged: true } },
    versionNegotiation: negotiation,
  },
);

function elicitAnswer(params) {
  const content = {};
  const schema = params.requestedSchema ?? {};
  for (const name of schema.required ?? []) {
    switch (schema.properties?.[name]?.type) {
      case "boolean": content[name] = true; break;
      case "integer": case "number": content[name] = 7; break;
      default: content[name] = "Ada";
    }
  }
  return { action: "accept", content };
}
client.setRequestHandler("elicitation/create", async (req) => elicitAnswer(req.params));
client.setRequestHandler("sampling/createMessage", async (req) => {
  const first = req.params.messages?.[0]?.content;
  const prompt = first && !Array.isArray(first) && first.type === "text" ? first.text : "";
  return { model: "mcptrunk-test-model", role: "assistant", content: { type: "text", text: "sampled: " + prompt }, stopReason: "endTurn" };
});
client.setRequestHandler("roots/list", async () => ({ roots: [{ uri: "file:///tmp/mcptrunk-proto-root", name: "proto-root" }] }));

let closed = false;
// The whole environment: the tests mark the processes they start through it.
const transport = new StdioClientTransport({ command, args, env: { ...process.env }, stderr: "ignore" });
transport.onclose = () => { closed = true; };

function errorOf(e) {
  return { error: String(e?.message ?? e).slice(0, 600), code: e?.code };
}

const timeout = { timeout: 120000 };
try {
  await client.connect(transport, timeout);
} catch (e) {
  process.stdout.write(JSON.stringify({ connected: false, ...errorOf(e) }) + "\n");
  await client.close().catch(() => {});
  process.exit(3);
}
process.stdout.write(JSON.stringify({
  connected: true,
  protocolVersion: client.getNegotiatedProtocolVersion(),
  era: client.getProtocolEra?.(),
  server: client.getServerVersion()?.name,
}) + "\n");

function texts(content) {
  return (content ?? []).map((c) => c.text ?? c.resource?.text ?? `<${c.type}>`).join("\n");
}

for (const step of plan.steps ?? []) {
  const out = { step: step.list ?? step.call ?? step.read ?? step.prompt ?? (step.skills && "skills") };
  try {
    if (step.list) {
      const r = {
        tools: () => client.listTools(undefined, timeout),
        prompts: () => client.listPrompts(undefined, timeout),
        resources: () => client.listResources(undefined, timeout),
        templates: () => client.listResourceTemplates(undefined, timeout),
      }[step.list];
      const res = await r();
      const items = res.tools ?? res.prompts ?? res.resources ?? res.resourceTemplates ?? [];
      out.names = items.map((x) => x.name ?? x.uri ?? x.uriTemplate);
      if (step.list === "resources" || step.list === "templates") {
        out.names = items.map((x) => x.uri ?? x.uriTemplate);
      }
    } else if (step.call) {
      const r = await client.callTool({ name: step.call, arguments: step.args ?? {} }, timeout);
      out.isError = !!r.isError;
      out.text = texts(r.content).slice(0, 600);
    } else if (step.read) {
      const r = await client.readResource({ uri: step.read }, timeout);
      out.text = (r.contents ?? []).map((c) => c.text ?? `<blob ${c.mimeType}>`).join("\n").slice(0, 600);
    } else if (step.skills) {
      const sc = new SkillsClient(client);
      if (!sc.supported) throw new Error("the server does not declare io.modelcontextprotocol/skills");
      const { skills } = await sc.list();
      out.names = skills.map((s) => s.uri);
      const verified = [];
      for (const listed of skills) {
        const { skill } = await sc.get(listed.uri);
        for (const file of skill.resources) {
          const got = await sc.read(skill, file.uri);
          if (got.verified) verified.push(got.uri);
        }
      }
      out.text = verified.join("\n");
    } else if (step.prompt) {
      const r = await client.getPrompt({ name: step.prompt, arguments: step.args ?? {} }, timeout);
      out.text = (r.messages ?? []).map((m) => m.content?.text ?? m.content?.resource?.text ?? `<${m.content?.type}>`).join("\n").slice(0, 600);
    }
    out.ok = true;
  } catch (e) {
    out.ok = false;
    Object.assign(out, errorOf(e));
  }
  out.connected = !closed;
  process.stdout.write(JSON.stringify(out) + "\n");
}
await client.close();
