package hostcfg

import (
	"errors"
	"strings"
	"testing"
)

// testEnv is the system the read tests run in: TOKEN is set, nothing else.
var testEnv = Env{GOOS: "linux", Home: "/home/u", Project: "/src/p", Getenv: func(k string) string {
	return map[string]string{"TOKEN": "secret-value"}[k]
}}

// want is what one server of a host file becomes.
type want struct {
	entry   string // the mcptrunk entry, as JSON; "" when refused
	problem string // part of the reason it is refused
	notes   []string
	self    bool
}

func readHost(t *testing.T, id string, scope Scope, file string) map[string]Server {
	t.Helper()
	h, err := HostByID(id)
	if err != nil {
		t.Fatal(err)
	}
	loc := Location{Host: h, Path: "/x/" + id, Scope: scope}
	if scope != ScopeUser {
		loc.Project = testEnv.Project
	}
	servers, err := Read(loc, []byte(file), testEnv)
	if err != nil {
		t.Fatalf("%s: %v", id, err)
	}
	out := map[string]Server{}
	for _, s := range servers {
		out[s.Name] = s
	}
	return out
}

func checkServers(t *testing.T, id string, got map[string]Server, wants map[string]want) {
	t.Helper()
	for name, w := range wants {
		s, ok := got[name]
		if !ok {
			t.Errorf("%s: no server %q", id, name)
			continue
		}
		if string(s.Entry) != w.entry {
			t.Errorf("%s %q: entry\n got %s\nwant %s", id, name, s.Entry, w.entry)
		}
		if w.problem == "" && s.Problem != "" || !strings.Contains(s.Problem, w.problem) {
			t.Errorf("%s %q: problem %q, want one with %q", id, name, s.Problem, w.problem)
		}
		if strings.Contains(s.Problem, "secret-value") {
			t.Errorf("%s %q: the problem quotes a value: %q", id, name, s.Problem)
		}
		notes := strings.Join(s.Notes, "\n")
		for _, n := range w.notes {
			if !strings.Contains(notes, n) {
				t.Errorf("%s %q: notes %q lack %q", id, name, s.Notes, n)
			}
		}
		if s.Self != w.self {
			t.Errorf("%s %q: self %v", id, name, s.Self)
		}
	}
	if len(got) != len(wants) {
		t.Errorf("%s: %d servers, want %d", id, len(got), len(wants))
	}
}

func TestReadClaudeDesktop(t *testing.T) {
	got := readHost(t, "claude-desktop", ScopeUser, `{
  "globalShortcut": "Ctrl+Space",
  "mcpServers": {
    "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/u/src"], "env": {"LOG": "${not-expanded}"}},
    "remote": {"type": "http", "url": "https://example.com/mcp?key=k", "headers": {"Authorization": "Bearer x"}},
    "off": {"command": "github-mcp", "disabled": true},
    "old-trunk": {"command": "/usr/local/bin/mcptrunk", "args": ["--config", "/c.json"]}
  },
  "preferences": {"menuBarEnabled": false}
}`)
	checkServers(t, "claude-desktop", got, map[string]want{
		"files":     {entry: `{"command":"npx","args":["-y","@modelcontextprotocol/server-filesystem","/home/u/src"],"env":{"LOG":"$${not-expanded}"}}`},
		"remote":    {entry: `{"type":"http","url":"https://example.com/mcp?key=k","headers":{"Authorization":"Bearer x"}}`},
		"off":       {entry: `{"command":"github-mcp","disabled":true}`},
		"old-trunk": {entry: `{"command":"/usr/local/bin/mcptrunk","args":["--config","/c.json"]}`, self: true},
	})
	if u := got["remote"].URL; u != "https://example.com/mcp" {
		t.Errorf("the URL shown is %q: its query may be a credential", u)
	}
}

func TestReadClaudeCode(t *testing.T) {
	file := `{
  "numStartups": 12,
  "mcpServers": {
    "gh": {"type": "stdio", "command": "${HOME}/bin/gh-mcp", "args": ["--level", "${LEVEL:-info}"], "env": {"GITHUB_TOKEN": "${TOKEN}"}},
    "api": {"type": "http", "url": "${API_URL:-https://api.example.com}/mcp", "headers": {"X-API-Key": "${TOKEN}"}},
    "events": {"type": "sse", "url": "https://events.example.com/sse"},
    "helper": {"type": "http", "url": "https://h.example.com/mcp", "headersHelper": "/bin/get-token"},
    "ws": {"type": "websocket", "url": "wss://x.example.com"},
    "trunk": {"command": "mcptrunk"}
  },
  "projects": {
    "/src/p": {"allowedTools": [], "mcpServers": {"local-db": {"command": "db-mcp", "args": ["--dsn", "${DSN}"]}}},
    "/src/other": {"mcpServers": {"elsewhere": {"command": "x"}}}
  }
}`
	checkServers(t, "claude-code", readHost(t, "claude-code", ScopeUser, file), map[string]want{
		"gh":     {entry: `{"command":"${HOME}/bin/gh-mcp","args":["--level","${LEVEL:-info}"],"env":{"GITHUB_TOKEN":"${TOKEN}"}}`, notes: []string{"${HOME}"}},
		"api":    {entry: `{"type":"http","url":"${API_URL:-https://api.example.com}/mcp","headers":{"X-API-Key":"${TOKEN}"}}`},
		"events": {entry: `{"type":"sse","url":"https://events.example.com/sse"}`},
		"helper": {problem: "headersHelper"},
		"ws":     {problem: `"websocket" is a transport mcptrunk does not have`},
		"trunk":  {entry: `{"command":"mcptrunk"}`, self: true}, // skipped as the trunk itself, whatever its name
	})
	checkServers(t, "claude-code local", readHost(t, "claude-code", ScopeLocal, file), map[string]want{
		"local-db": {entry: `{"command":"db-mcp","args":["--dsn","${DSN}"]}`, notes: []string{"needs ${DSN}"}},
	})
	checkServers(t, "claude-code .mcp.json", readHost(t, "claude-code", ScopeProject, `{"mcpServers": {"p": {"command": "./tool", "cwd": "/src/p"}}}`), map[string]want{
		"p": {entry: `{"command":"./tool","cwd":"/src/p"}`},
	})
}

func TestReadCursor(t *testing.T) {
	got := readHost(t, "cursor", ScopeProject, `{
  // Cursor reads comments too
  "mcpServers": {
    "local": {"type": "stdio", "command": "node", "args": ["${workspaceFolder}/server.js", "${userHome}${/}data", "${workspaceFolderBasename}"], "env": {"KEY": "${env:TOKEN}"}},
    "withfile": {"command": "x", "envFile": "${workspaceFolder}/.env"},
    "remote": {"url": "https://r.example.com/mcp", "headers": {"Authorization": "Bearer ${env:TOKEN}"}},
    "oauth": {"url": "https://o.example.com/mcp", "auth": {"CLIENT_ID": "${env:CLIENT_ID}", "CLIENT_SECRET": "s", "scopes": ["read"]}},
    "odd": {"command": "x", "args": ["${config:editor.fontSize}"]},
  },
}`)
	checkServers(t, "cursor", got, map[string]want{
		"local":    {entry: `{"command":"node","args":["/src/p/server.js","/home/u/data","p"],"env":{"KEY":"${TOKEN}"}}`},
		"withfile": {problem: "envFile"},
		"remote":   {entry: `{"type":"http","url":"https://r.example.com/mcp","headers":{"Authorization":"Bearer ${TOKEN}"}}`},
		"oauth":    {entry: `{"type":"http","url":"https://o.example.com/mcp","oauth":{"clientId":"${CLIENT_ID}","clientSecret":"s","scopes":["read"]}}`, notes: []string{"needs ${CLIENT_ID}"}},
		"odd":      {problem: "${config:editor.fontSize} is not a variable"},
	})
	user := readHost(t, "cursor", ScopeUser, `{"mcpServers": {"w": {"command": "x", "args": ["${workspaceFolder}"]}}}`)
	checkServers(t, "cursor user", user, map[string]want{"w": {problem: "user-scope file has no project"}})
}

func TestReadVSCode(t *testing.T) {
	got := readHost(t, "vscode", ScopeProject, `{
  "inputs": [{"type": "promptString", "id": "api-key", "description": "API key", "password": true}],
  "servers": {
    /* a local one */
    "fetch": {"type": "stdio", "command": "uvx", "args": ["mcp-server-fetch"], "env": {"T": "${env:TOKEN}"}, "cwd": "${workspaceFolder}", "dev": {"watch": "src/**/*.ts"}},
    "prompted": {"type": "stdio", "command": "x", "env": {"API_KEY": "${input:api-key}"}},
    "github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/", "headers": {"Authorization": "Bearer ${env:TOKEN}"}, "gallery": true, "version": "1.0.0"},
    "envfile": {"type": "stdio", "command": "x", "envFile": "${workspaceFolder}/.env"},
    "legacy": {"type": "sse", "url": "http://127.0.0.1:9000/sse", "disabled": true},
  }
}`)
	checkServers(t, "vscode", got, map[string]want{
		"fetch":    {entry: `{"command":"uvx","args":["mcp-server-fetch"],"env":{"T":"${TOKEN}"},"cwd":"/src/p"}`, notes: []string{`"dev"`}},
		"prompted": {problem: "${input:api-key} is a value VS Code prompts for"},
		"github":   {entry: `{"type":"http","url":"https://api.githubcopilot.com/mcp/","headers":{"Authorization":"Bearer ${TOKEN}"}}`},
		"envfile":  {problem: "envFile"},
		"legacy":   {entry: `{"type":"sse","url":"http://127.0.0.1:9000/sse","disabled":true}`},
	})
}

func TestReadWindsurf(t *testing.T) {
	got := readHost(t, "windsurf", ScopeUser, `{"mcpServers": {
    "gh": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${env:TOKEN}"}, "disabled": false, "disabledTools": ["delete_repo"]},
    "remote": {"serverUrl": "https://w.example.com/mcp", "headers": {"API_KEY": "${env:TOKEN}"}},
    "fromfile": {"command": "x", "env": {"K": "${file:/home/u/.key}"}},
    "approved": {"command": "y", "alwaysAllow": ["read"]}
  }}`)
	checkServers(t, "windsurf", got, map[string]want{
		"gh":       {entry: `{"command":"npx","args":["-y","@modelcontextprotocol/server-github"],"env":{"GITHUB_PERSONAL_ACCESS_TOKEN":"${TOKEN}"},"tools":{"deny":["delete_repo"]}}`},
		"remote":   {entry: `{"type":"http","url":"https://w.example.com/mcp","headers":{"API_KEY":"${TOKEN}"}}`},
		"fromfile": {problem: "${file:...}"},
		"approved": {entry: `{"command":"y"}`, notes: []string{`"alwaysAllow" is not carried over`}},
	})
}

func TestReadZed(t *testing.T) {
	got := readHost(t, "zed", ScopeUser, `// Zed settings
{
  "ui_font_size": 16,
  "context_servers": {
    "new-form": {"source": "custom", "command": "some-command", "args": ["arg-1"], "env": {"K": "v"}},
    "old-form": {"command": {"path": "/usr/bin/old", "args": ["--x"], "env": {"A": "${literal}"}}, "settings": {}},
    "remote": {"url": "https://z.example.com/mcp", "headers": {"Authorization": "Bearer t"}},
    "from-extension": {"source": "extension", "settings": {"key": "v"}},
    "off": {"command": "x", "enabled": false},
  },
}`)
	checkServers(t, "zed", got, map[string]want{
		"new-form":       {entry: `{"command":"some-command","args":["arg-1"],"env":{"K":"v"}}`},
		"old-form":       {entry: `{"command":"/usr/bin/old","args":["--x"],"env":{"A":"$${literal}"}}`},
		"remote":         {entry: `{"type":"http","url":"https://z.example.com/mcp","headers":{"Authorization":"Bearer t"}}`},
		"from-extension": {problem: "Zed extension"},
		"off":            {entry: `{"command":"x","disabled":true}`},
	})
}

func TestReadRefusesWhatDoesNotParse(t *testing.T) {
	h, _ := HostByID("claude-desktop")
	for _, file := range []string{`{"mcpServers": {"a": {}`, `{"mcpServers": []}`, `[1]`, `{"mcpServers": {"a": {}, "a": {}}}`, `{"a": 1} {}`, `{"mcpServers": {}, // no comments here
}`} {
		_, err := Read(Location{Host: h, Path: "/x/claude_desktop_config.json", Scope: ScopeUser}, []byte(file), testEnv)
		var pe *ParseError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), "/x/claude_desktop_config.json") || !strings.Contains(err.Error(), "Claude Desktop") {
			t.Errorf("%q: %v", file, err)
		}
	}
}
