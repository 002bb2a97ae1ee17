// A stdio MCP server that serves skills (the io.modelcontextprotocol/skills
// extension, SEP-2640) from a directory: each subdirectory holding a
// SKILL.md is a skill at skill://<name>/SKILL.md, and every file of it is a
// resource whose entry carries its size and SHA-256 digest. mcptrunk's tests
// run it behind the trunk, with tshost2.mjs's SkillsClient reading and
// verifying every file through the trunk.
//
//   node skillserver.mjs DIR
//
// It speaks 2025-11-25 (initialize) and JSON-RPC lines on stdio, nothing
// else: no SDK server ships the skills extension yet, and this is only as
// much of a server as the extension needs.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { createInterface } from "node:readline";

const root = process.argv[2];

function filesOf(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? filesOf(p) : [p];
  });
}

function skills() {
  return readdirSync(root).filter((name) => {
    try { return statSync(join(root, name, "SKILL.md")).isFile(); } catch { return false; }
  }).sort().map((name) => {
    const text = readFileSync(join(root, name, "SKILL.md"), "utf8");
    const front = Object.fromEntries([...text.split("---")[1].matchAll(/^(\w+):\s*(.*)$/gm)].map((m) => [m[1], m[2].trim()]));
    return {
      uri: `skill://${name}/SKILL.md`,
      frontmatter: front,
      resources: filesOf(join(root, name)).sort().map((p) => {
        const bytes = readFileSync(p);
        return {
          uri: `skill://${name}/${relative(join(root, name), p).split(sep).join("/")}`,
          digest: "sha256:" + createHash("sha256").update(bytes).digest("hex"),
          size: bytes.length,
        };
      }),
    };
  });
}

function pathOf(uri) {
  const m = /^skill:\/\/([^/]+)\/(.+)$/.exec(uri);
  return m && !m[2].split("/").includes("..") ? join(root, m[1], ...m[2].split("/")) : null;
}

const handlers = {
  initialize: (p) => ({
    protocolVersion: "2025-11-25",
    capabilities: { resources: {}, extensions: { "io.modelcontextprotocol/skills": {} } },
    serverInfo: { name: "skillserver", version: "0" },
  }),
  ping: () => ({}),
  "resources/list": () => ({ resources: [] }),
  "skills/list": () => ({ skills: skills(), ttlMs: 60000, cacheScope: "public" }),
  "skills/get": (p) => {
    const skill = skills().find((s) => s.uri === p.uri);
    if (!skill) throw { code: -32602, message: `no skill ${p.uri}` };
    return { skill, ttlMs: 60000, cacheScope: "public" };
  },
  "resources/read": (p) => {
    const path = pathOf(p.uri);
    let text;
    try { text = readFileSync(path, "utf8"); } catch { throw { code: -32002, message: `no resource ${p.uri}` }; }
    return { contents: [{ uri: p.uri, mimeType: p.uri.endsWith(".md") ? "text/markdown" : "text/plain", text }] };
  },
};

const rl = createInterface({ input: process.stdin });
rl.on("line", (line) => {
  let msg;
  try { msg = JSON.parse(line); } catch { return; }
  if (msg.id === undefined || msg.method === undefined) return; // notifications, answers
  const handler = handlers[msg.method];
  let reply;
  try {
    if (!handler) throw { code: -32601, message: `method ${msg.method} not found` };
    reply = { jsonrpc: "2.0", id: msg.id, result: handler(msg.params ?? {}) };
  } catch (e) {
    reply = { jsonrpc: "2.0", id: msg.id, error: { code: e.code ?? -32603, message: e.message ?? String(e) } };
  }
  process.stdout.write(JSON.stringify(reply) + "\n");
});
