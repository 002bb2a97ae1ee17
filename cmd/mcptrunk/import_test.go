package main

// mcptrunk import, install and uninstall, run as the built binary with
// HOME, XDG_CONFIG_HOME and APPDATA in a temporary directory: no test reads
// or writes the real user's host files.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/hostcfg"
)

const hostFilesTimeout = 30 * time.Second

// hostFilesSecret is in every env and header value of the hosts' files; no
// output may show it.
const hostFilesSecret = "s3cr3t-value"

// fakeHome is a fake home: the hosts' files are written under it, and a
// project directory, where the commands run, inside it.
type fakeHome struct {
	home, project string
}

// newFakeHome makes a fake home, with its project directory, for t.
func newFakeHome(t *testing.T) *fakeHome {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the hosts' files are written at their Linux and macOS paths")
	}
	h := &fakeHome{home: t.TempDir()}
	h.project = filepath.Join(h.home, "src", "proj")
	if err := os.MkdirAll(h.project, 0o755); err != nil {
		t.Fatal(err)
	}
	return h
}

// path is where a host keeps a file in this home on this OS.
func (h *fakeHome) path(t *testing.T, host string, scope hostcfg.Scope) string {
	t.Helper()
	hh, err := hostcfg.HostByID(host)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range hostcfg.Locations(hh, h.env()) {
		if l.Scope == scope {
			return l.Path
		}
	}
	t.Fatalf("%s has no %s file", host, scope)
	return ""
}

func (h *fakeHome) env() hostcfg.Env {
	return hostcfg.Env{GOOS: runtime.GOOS, Home: h.home, Project: h.project, Getenv: func(k string) string {
		return map[string]string{"XDG_CONFIG_HOME": filepath.Join(h.home, ".config")}[k]
	}}
}

func (h *fakeHome) write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// configPath is where import writes mcptrunk's config when there is none.
func (h *fakeHome) configPath() string {
	return filepath.Join(h.home, ".config", "mcptrunk", "config.json")
}

// run runs mcptrunk in the project directory with the home's environment.
func (h *fakeHome) run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	tag := newTag(t)
	ctx, cancel := context.WithTimeout(context.Background(), hostFilesTimeout)
	defer cancel()
	cmd := trunkCmd(tag, args...)
	cmd.Dir = h.project
	var env []string
	for _, kv := range cmd.Env {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "HOME", "XDG_CONFIG_HOME", "APPDATA", "USERPROFILE", "MCPTRUNK_CONFIG", "CLAUDE_CONFIG_DIR", "TOKEN":
		default:
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "HOME="+h.home, "XDG_CONFIG_HOME="+filepath.Join(h.home, ".config"),
		"APPDATA="+filepath.Join(h.home, "AppData", "Roaming"), "USERPROFILE="+h.home)
	var out bytes.Buffer
	errOut := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = &out, errOut
	err := cmd.Start()
	if err == nil {
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err = <-done:
		case <-ctx.Done():
			_ = cmd.Process.Kill()
			<-done
			t.Fatalf("mcptrunk %s did not finish\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), out.String(), errOut.String())
		}
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	checkNoRace(t, errOut)
	assertNoProcesses(t, tag, 5*time.Second)
	if strings.Contains(out.String()+errOut.String(), hostFilesSecret) {
		t.Errorf("mcptrunk %s printed a secret value:\n%s\n%s", strings.Join(args, " "), out.String(), errOut.String())
	}
	return out.String(), errOut.String(), code
}

// expect runs mcptrunk, fails unless it exits with code, and checks that
// stdout has every one of want.
func (h *fakeHome) expect(t *testing.T, code int, want []string, args ...string) string {
	t.Helper()
	stdout, stderr, got := h.run(t, args...)
	if got != code {
		t.Fatalf("mcptrunk %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), got, code, stdout, stderr)
	}
	for _, w := range want {
		if !strings.Contains(stdout+stderr, w) {
			t.Errorf("mcptrunk %s: output lacks %q\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), w, stdout, stderr)
		}
	}
	return stdout
}

// configServers reads mcptrunk's config's entries.
func configServers(t *testing.T, path string) map[string]map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		MCPServers map[string]map[string]any `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatalf("%s is not JSON: %v\n%s", path, err, data)
	}
	return cfg.MCPServers
}

// writeEveryHost writes a realistic file of each host: every field they
// document, their ${VAR} forms, disabled entries, remote servers with
// headers, and entries mcptrunk cannot express.
func (h *fakeHome) writeEveryHost(t *testing.T) {
	s := hostFilesSecret
	h.write(t, h.path(t, "claude-desktop", hostcfg.ScopeUser), `{
  "globalShortcut": "Alt+Space",
  "mcpServers": {
    "notes": {"command": "`+notesBin+`", "args": [], "env": {"NOTES_KEY": "`+s+`"}},
    "github": {"command": "docker", "args": ["run", "-i", "--rm", "ghcr.io/github/github-mcp-server"], "disabled": true},
    "old": {"command": "/opt/bin/mcptrunk", "args": ["--config", "/elsewhere.json"]}
  }
}`)
	h.write(t, h.path(t, "claude-code", hostcfg.ScopeUser), `{
  "numStartups": 42,
  "mcpServers": {
    "sentry": {"type": "http", "url": "https://mcp.sentry.dev/mcp", "headers": {"Authorization": "Bearer `+s+`"}},
    "events": {"type": "sse", "url": "${EVENTS_URL:-https://events.example.com}/sse", "headers": {"X-Key": "${TOKEN}"}},
    "db": {"type": "stdio", "command": "${HOME}/bin/db-mcp", "args": ["--dsn", "${DSN:-sqlite://x.db}"], "env": {"DB_PASSWORD": "`+s+`"}},
    "helped": {"type": "http", "url": "https://h.example.com/mcp", "headersHelper": "/bin/token"}
  },
  "projects": {
    "`+h.project+`": {"allowedTools": [], "mcpServers": {"local-only": {"type": "stdio", "command": "local-mcp", "args": []}}}
  }
}`)
	h.write(t, filepath.Join(h.project, ".mcp.json"), `{"mcpServers": {"shared": {"command": "npx", "args": ["-y", "shared-mcp"], "env": {"K": "${TOKEN}"}}}}`)
	h.write(t, h.path(t, "cursor", hostcfg.ScopeUser), `{
  "mcpServers": {
    "linear": {"url": "https://mcp.linear.app/sse", "type": "sse", "headers": {"Authorization": "Bearer ${env:TOKEN}"}},
    "withenvfile": {"command": "x", "envFile": "/home/x/.env"},
    "oauthed": {"url": "https://o.example.com/mcp", "auth": {"CLIENT_ID": "${env:CLIENT_ID}", "scopes": ["read"]}},
    "notes": {"command": "some-other-notes"}
  }
}`)
	h.write(t, filepath.Join(h.project, ".cursor", "mcp.json"), `{"mcpServers": {"proj-tool": {"command": "node", "args": ["${workspaceFolder}/tool.js"], "env": {"P": "${env:TOKEN}"}}}}`)
	h.write(t, h.path(t, "vscode", hostcfg.ScopeUser), `{
  // VS Code's mcp.json allows comments
  "inputs": [{"type": "promptString", "id": "key", "description": "API key", "password": true}],
  "servers": {
    "fetch": {"type": "stdio", "command": "uvx", "args": ["mcp-server-fetch"], "env": {"A": "${env:TOKEN}"}, "dev": {"watch": "**/*.py"}},
    "prompted": {"type": "http", "url": "https://p.example.com/mcp", "headers": {"Authorization": "Bearer ${input:key}"}},
    "ws": {"type": "websocket", "url": "wss://w.example.com"},
  },
}`)
	h.write(t, filepath.Join(h.project, ".vscode", "mcp.json"), `{"servers": {"ws-tool": {"type": "stdio", "command": "tool", "cwd": "${workspaceFolder}", "args": ["${userHome}"]}}}`)
	h.write(t, h.path(t, "windsurf", hostcfg.ScopeUser), `{"mcpServers": {
    "brave": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-brave-search"], "env": {"BRAVE_API_KEY": "`+s+`"}, "disabledTools": ["brave_local_search"], "disabled": true},
    "remote-w": {"serverUrl": "https://w.example.com/mcp", "headers": {"API_KEY": "${env:TOKEN}"}},
    "keyfile": {"command": "k", "env": {"K": "${file:/home/x/key}"}}
  }}`)
	h.write(t, h.path(t, "zed", hostcfg.ScopeUser), `// Zed settings
{
  "theme": "One Dark",
  "context_servers": {
    "zed-new": {"source": "custom", "command": "zed-mcp", "args": ["--stdio"], "env": {"Z": "`+s+`"}},
    "zed-old": {"command": {"path": "/usr/bin/zold", "args": [], "env": {}}, "settings": {}},
    "zed-remote": {"url": "https://z.example.com/mcp", "headers": {"Authorization": "Bearer `+s+`"}},
    "zed-ext": {"source": "extension", "settings": {"token": "`+s+`"}}, // from an extension
  },
}`)
}

// hostFilesWant is every entry the files of writeEveryHost give mcptrunk.
func (h *fakeHome) want() map[string]string {
	s := hostFilesSecret
	return map[string]string{
		"notes":      `{"command":"` + notesBin + `","env":{"NOTES_KEY":"` + s + `"}}`,
		"github":     `{"args":["run","-i","--rm","ghcr.io/github/github-mcp-server"],"command":"docker","disabled":true}`,
		"sentry":     `{"headers":{"Authorization":"Bearer ` + s + `"},"type":"http","url":"https://mcp.sentry.dev/mcp"}`,
		"events":     `{"headers":{"X-Key":"${TOKEN}"},"type":"sse","url":"${EVENTS_URL:-https://events.example.com}/sse"}`,
		"db":         `{"args":["--dsn","${DSN:-sqlite://x.db}"],"command":"${HOME}/bin/db-mcp","env":{"DB_PASSWORD":"` + s + `"}}`,
		"local-only": `{"command":"local-mcp"}`,
		"shared":     `{"args":["-y","shared-mcp"],"command":"npx","env":{"K":"${TOKEN}"}}`,
		"linear":     `{"headers":{"Authorization":"Bearer ${TOKEN}"},"type":"sse","url":"https://mcp.linear.app/sse"}`,
		"oauthed":    `{"oauth":{"clientId":"${CLIENT_ID}","scopes":["read"]},"type":"http","url":"https://o.example.com/mcp"}`,
		"proj-tool":  `{"args":["` + h.project + `/tool.js"],"command":"node","env":{"P":"${TOKEN}"}}`,
		"fetch":      `{"args":["mcp-server-fetch"],"command":"uvx","env":{"A":"${TOKEN}"}}`,
		"ws-tool":    `{"args":["` + h.home + `"],"command":"tool","cwd":"` + h.project + `"}`,
		"brave":      `{"args":["-y","@modelcontextprotocol/server-brave-search"],"command":"npx","disabled":true,"env":{"BRAVE_API_KEY":"` + s + `"},"tools":{"deny":["brave_local_search"]}}`,
		"remote-w":   `{"headers":{"API_KEY":"${TOKEN}"},"type":"http","url":"https://w.example.com/mcp"}`,
		"zed-new":    `{"args":["--stdio"],"command":"zed-mcp","env":{"Z":"` + s + `"}}`,
		"zed-old":    `{"command":"/usr/bin/zold"}`,
		"zed-remote": `{"headers":{"Authorization":"Bearer ` + s + `"},"type":"http","url":"https://z.example.com/mcp"}`,
	}
}

// TestImportEveryHost reads a realistic file of every host, shows the plan
// without writing, writes it with --write, and finds nothing left to add
// on a second run.
func TestImportEveryHost(t *testing.T) {
	h := newFakeHome(t)
	h.writeEveryHost(t)
	cfg := h.configPath()
	out := h.expect(t, 0, []string{
		"mcptrunk config: " + cfg + " (new)",
		"+ notes", "+ github", "+ sentry", "http  https://mcp.sentry.dev/mcp", "+ events", "+ db", "+ local-only", "+ shared",
		"+ linear", "+ oauthed", "+ proj-tool", "+ fetch", "+ ws-tool", "+ brave", "+ remote-w", "+ zed-new", "+ zed-old", "+ zed-remote",
		"docker (disabled)",
		". old              runs mcptrunk itself",
		"- helped           cannot be carried over: headersHelper",
		"- withenvfile      cannot be carried over: envFile",
		"~ notes            not added: a different entry of this name comes from Claude Desktop",
		"- prompted         cannot be carried over: headers.Authorization: ${input:key} is a value VS Code prompts for",
		`- ws               cannot be carried over: type: "websocket"`,
		"- keyfile          cannot be carried over: env.K: ${file:...}",
		"- zed-ext          cannot be carried over: no command or url: a server a Zed extension provides",
		"note: needs ${TOKEN}, which is not set",
		`note: "dev" (VS Code's watch and debug mode) is not carried over`,
		"17 servers to add, 6 that mcptrunk cannot express",
		"Run again with --write",
	}, "import")
	if strings.Contains(out, "?") {
		t.Errorf("a URL's query is shown:\n%s", out)
	}
	if _, err := os.Stat(cfg); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("import without --write wrote %s", cfg)
	}

	h.expect(t, 0, []string{"Added 17 servers to " + cfg}, "import", "--write")
	got := configServers(t, cfg)
	for name, w := range h.want() {
		if g := mustJSON(got[name]); g != w {
			t.Errorf("%s:\n got %s\nwant %s", name, g, w)
		}
	}
	if len(got) != len(h.want()) {
		t.Errorf("%d servers in the config, want %d", len(got), len(h.want()))
	}
	if st, err := os.Stat(cfg); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the new config, which holds tokens: %v, %v", st.Mode(), err)
	}
	before, _ := os.ReadFile(cfg)
	h.expect(t, 0, []string{"= notes            already in mcptrunk's config", "0 servers to add"}, "import", "--write")
	if after, _ := os.ReadFile(cfg); !bytes.Equal(before, after) {
		t.Error("a second import changed the config")
	}
	if m, _ := filepath.Glob(cfg + ".bak-*"); len(m) != 0 {
		t.Errorf("backups with nothing written: %q", m)
	}
}

// TestImportWriteBackup: --write keeps the config's bytes in a backup,
// changes only mcpServers, and never replaces an entry already there.
func TestImportWriteBackup(t *testing.T) {
	h := newFakeHome(t)
	h.write(t, h.path(t, "claude-desktop", hostcfg.ScopeUser), `{"mcpServers": {"mine": {"command": "theirs"}, "new": {"command": "n", "args": ["a"]}}}`)
	cfg := filepath.Join(h.project, "mcptrunk.json") // found as ./mcptrunk.json
	orig := "{\n  \"mcpServers\": {\n    \"mine\": {\"command\": \"mine\"}\n  },\n  \"trunk\": {\"concurrency\": 4}\n}\n"
	h.write(t, cfg, orig)
	h.expect(t, 0, []string{"mcptrunk config: " + cfg + "\n", "~ mine", "kept", "+ new", "Backed up " + cfg + " to " + cfg + ".bak-"}, "import", "--from", "claude-desktop", "--write")
	backups, _ := filepath.Glob(cfg + ".bak-*")
	if len(backups) != 1 {
		t.Fatalf("backups: %q", backups)
	}
	if b, _ := os.ReadFile(backups[0]); string(b) != orig {
		t.Errorf("the backup is not the config as it was:\n%s", b)
	}
	want := "{\n  \"mcpServers\": {\n    \"mine\": {\"command\": \"mine\"},\n    \"new\": {\n      \"command\": \"n\",\n      \"args\": [\n        \"a\"\n      ]\n    }\n  },\n  \"trunk\": {\"concurrency\": 4}\n}\n"
	if b, _ := os.ReadFile(cfg); string(b) != want {
		t.Errorf("config:\n%s\nwant\n%s", b, want)
	}
}

// TestImportRefuses: a host file that does not parse is reported and
// skipped (exit 1); a config of mcptrunk's that does not parse is not
// written to.
func TestImportRefuses(t *testing.T) {
	h := newFakeHome(t)
	bad := h.path(t, "windsurf", hostcfg.ScopeUser)
	h.write(t, bad, `{"mcpServers": {"a": {"command": "a"},}}`) // Windsurf's file is plain JSON
	h.write(t, h.path(t, "cursor", hostcfg.ScopeUser), `{"mcpServers": {"c": {"command": "c"}}}`)
	h.expect(t, 1, []string{bad + ": Windsurf's file cannot be parsed", "+ c"}, "import")
	h.expect(t, 1, []string{bad + ": Windsurf's file cannot be parsed: line 1, column 38", "0 servers to add"}, "import", "--from", "windsurf", "--write")
	if _, err := os.Stat(h.configPath()); !errors.Is(err, os.ErrNotExist) {
		t.Error("a config was written from a file that does not parse")
	}

	cfg := h.configPath()
	h.write(t, cfg, `{"mcpServers": {"x": {"command": 1}}}`)
	_, stderr, code := h.run(t, "import", "--from", "cursor", "--write")
	if code != 1 || !strings.Contains(stderr, "mcptrunk's config "+cfg+" does not parse") || !strings.Contains(stderr, `server "x": command`) {
		t.Errorf("exit %d\n%s", code, stderr)
	}
	if b, _ := os.ReadFile(cfg); string(b) != `{"mcpServers": {"x": {"command": 1}}}` {
		t.Errorf("the config was changed: %s", b)
	}
	if m, _ := filepath.Glob(cfg + ".bak-*"); len(m) != 0 {
		t.Errorf("backups: %q", m)
	}
	h.expect(t, 2, []string{`import takes no arguments (got "stray"); name a host or file with --from`}, "import", "stray")
	_, stderr, _ = h.run(t, "import", "--from", "/x/servers.json")
	if !strings.Contains(stderr, "HOST:/x/servers.json") {
		t.Errorf("an unknown file: %s", stderr)
	}
}
