package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/hostcfg"
)

// TestInstallRoundTrip installs mcptrunk into each host's file and
// uninstalls it again: the host gets one entry that runs this binary with
// mcptrunk's config, keeps what mcptrunk cannot run, its other settings
// stay, and uninstall gives back the file byte for byte.
func TestInstallRoundTrip(t *testing.T) {
	t.Parallel()
	trunk, err := filepath.EvalSymlinks(trunkBin)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		host, scope string
		path        func(h *fakeHome) string
		file        string
		kept        []string // entries the host keeps beside mcptrunk's
	}{
		{"claude-desktop", "user", nil, "{\n  \"globalShortcut\": \"Alt+Space\",\n  \"mcpServers\": {\n    \"notes\": {\"command\": \"" + notesBin + "\", \"env\": {\"K\": \"" + hostFilesSecret + "\"}}\n  },\n  \"preferences\": {\"menuBarEnabled\": false}\n}\n", nil},
		{"claude-code", "user", nil, "{\n  \"numStartups\": 7,\n  \"mcpServers\": {\n    \"api\": {\"type\": \"http\", \"url\": \"https://a.example.com/mcp\"},\n    \"helped\": {\"type\": \"http\", \"url\": \"https://h.example.com/mcp\", \"headersHelper\": \"/bin/t\"}\n  },\n  \"projects\": {\"/p\": {\"mcpServers\": {\"x\": {\"command\": \"x\"}}}}\n}", []string{"helped"}},
		{"claude-code", "project", func(h *fakeHome) string { return filepath.Join(h.project, ".mcp.json") }, `{"mcpServers":{"shared":{"command":"npx","args":["-y","shared"]}}}`, nil},
		{"vscode", "user", nil, "{\n  // my servers\n  \"inputs\": [{\"type\": \"promptString\", \"id\": \"k\"}],\n  \"servers\": {\n    \"fetch\": {\"type\": \"stdio\", \"command\": \"uvx\", \"args\": [\"mcp-server-fetch\"]},\n    /* prompted */ \"p\": {\"type\": \"stdio\", \"command\": \"p\", \"env\": {\"K\": \"${input:k}\"}},\n  },\n}\n", []string{"p"}},
		{"cursor", "project", func(h *fakeHome) string { return filepath.Join(h.project, ".cursor", "mcp.json") }, `{"mcpServers": {"c": {"command": "c"}}}`, nil},
		{"windsurf", "user", nil, `{"mcpServers": {"w": {"serverUrl": "https://w.example.com/mcp", "disabled": true}}}`, nil},
		{"gemini", "project", func(h *fakeHome) string { return filepath.Join(h.project, ".gemini", "settings.json") }, "{\n  // Gemini CLI\n  \"theme\": \"Dracula\",\n  \"mcpServers\": {\n    \"g\": {\"httpUrl\": \"https://g.example.com/mcp\", \"timeout\": 5000, \"trust\": true}\n  }\n}\n", nil},
		{"codex", "user", nil, "# Codex\nmodel = \"o3\"\n\n[mcp_servers.docs]\ncommand = \"npx\"\nargs = [\"-y\", \"docs\"]\n\n[mcp_servers.docs.env]\nK = \"v\"\n\n[profiles.fast]\nmodel = \"mini\"\n", nil},
		{"zed", "user", nil, "// Zed\n{\n  \"theme\": \"One Dark\",\n  \"context_servers\": {\n    \"z\": {\"command\": \"z\", \"args\": []},\n    \"ext\": {\"source\": \"extension\", \"settings\": {}},\n  },\n  \"vim_mode\": true, // trailing\n}\n", []string{"ext"}},
	}
	for _, c := range cases {
		t.Run(c.host+"-"+c.scope, func(t *testing.T) {
			h := newFakeHome(t)
			path := ""
			if c.path != nil {
				path = c.path(h)
			} else {
				path = h.path(t, c.host, hostcfg.Scope(c.scope))
			}
			h.write(t, path, c.file)
			cfg := h.configPath()
			h.expect(t, 0, []string{"now starts mcptrunk", path + ".mcptrunk-backup"}, "install", "--host", c.host, "--scope", c.scope)
			if b, _ := os.ReadFile(path + ".mcptrunk-backup"); string(b) != c.file {
				t.Errorf("the backup is not the file as it was:\n%s", b)
			}
			hh, _ := hostcfg.HostByID(c.host)
			loc := hostcfg.Location{Host: hh, Path: path, Scope: hostcfg.Scope(c.scope), Project: h.project}
			installed, _ := os.ReadFile(path)
			servers, err := hostcfg.Read(loc, installed, h.env())
			if err != nil {
				t.Fatalf("the installed file: %v\n%s", err, installed)
			}
			var names []string
			for _, s := range servers {
				names = append(names, s.Name)
			}
			if want := append([]string{"trunk"}, c.kept...); strings.Join(names, ",") != strings.Join(want, ",") {
				t.Errorf("the host has %q, want %q:\n%s", names, want, installed)
			}
			args, _ := json.Marshal(installArgs(hh, "trunk", cfg))
			var compact bytes.Buffer
			plain, _ := hostcfg.StripJSONC(installed)
			_ = json.Compact(&compact, plain)
			hasArgs := strings.Contains(compact.String(), `"args":`+string(args))
			if c.host == "codex" { // TOML: an array of the same strings, with spaces
				hasArgs = strings.Contains(string(installed), "args = "+strings.ReplaceAll(string(args), `","`, `", "`))
			}
			if servers[0].Command != trunk || !servers[0].Self || !hasArgs {
				t.Errorf("the host's entry runs %q, want %s serve --config %s:\n%s", servers[0].Command, trunk, cfg, installed)
			}
			if strings.Contains(c.file, "// ") && !strings.Contains(string(installed), "// ") {
				t.Errorf("comments were lost:\n%s", installed)
			}
			if len(configServers(t, cfg)) == 0 {
				t.Error("nothing was moved into mcptrunk's config")
			}
			for _, k := range c.kept {
				if _, ok := configServers(t, cfg)[k]; ok {
					t.Errorf("%q is both kept in the host and moved", k)
				}
			}

			_, stderr, code := h.run(t, "install", "--host", c.host, "--scope", c.scope)
			if code != 1 || !strings.Contains(stderr, "already installed") {
				t.Errorf("a second install: exit %d\n%s", code, stderr)
			}
			h.expect(t, 0, []string{"as it was before install"}, "uninstall", "--host", c.host, "--scope", c.scope)
			if b, _ := os.ReadFile(path); string(b) != c.file {
				t.Errorf("uninstall did not restore the file byte for byte:\n got %q\nwant %q", b, c.file)
			}
			if _, err := os.Stat(path + ".mcptrunk-backup"); !os.IsNotExist(err) {
				t.Errorf("the backup is still there: %v", err)
			}
			_, stderr, code = h.run(t, "uninstall", "--host", c.host, "--scope", c.scope)
			if code != 1 || !strings.Contains(stderr, "not installed") {
				t.Errorf("a second uninstall: exit %d\n%s", code, stderr)
			}
		})
	}
}

// TestInstallServes: after install, the config the host's entry names
// serves the servers moved into it.
func TestInstallServes(t *testing.T) {
	h := newFakeHome(t)
	path := h.path(t, "claude-desktop", hostcfg.ScopeUser)
	h.write(t, path, `{"mcpServers": {"notes": {"command": "`+notesBin+`"}}}`)
	h.expect(t, 0, []string{"+ notes"}, "install", "--host", "claude-desktop")
	h.expect(t, 0, []string{"mcp__notes__search"}, "list", "--config", h.configPath())
	// The host's own file, as docs/hosts.md suggests: the entry that runs
	// mcptrunk is skipped with a note, not refused as a reserved name.
	h.expect(t, 0, []string{`note: server "trunk": skipped: it runs mcptrunk itself`, "config: " + path + ": ok, 0 servers"}, "check", "--config", path)
}

// TestInstallNamesUnusableServers: install says which servers will not
// start until which variables are set, and the others serve.
func TestInstallNamesUnusableServers(t *testing.T) {
	h := newFakeHome(t)
	path := h.path(t, "claude-code", hostcfg.ScopeUser)
	h.write(t, path, `{"mcpServers": {"notes": {"command": "`+notesBin+`"}, "gh": {"url": "https://api.example.invalid/mcp", "headers": {"Authorization": "Bearer ${MCPTRUNK_TEST_UNSET_TOKEN}"}}}}`)
	h.expect(t, 0, []string{"+ gh", "+ notes", "These servers will not start", "  gh: " + unsetTokenWhy}, "install", "--host", "claude-code")
	h.expect(t, 0, []string{"mcp__notes__search"}, "list", "--config", h.configPath())
}

// TestInstallRefuses: a host file that does not parse is left alone, as
// is everything else.
func TestInstallRefuses(t *testing.T) {
	h := newFakeHome(t)
	path := h.path(t, "claude-desktop", hostcfg.ScopeUser)
	const broken = `{"mcpServers": {"notes": {"command": "x"}` // unterminated
	h.write(t, path, broken)
	_, stderr, code := h.run(t, "install", "--host", "claude-desktop")
	if code != 1 || !strings.Contains(stderr, path+": Claude Desktop's file cannot be parsed") {
		t.Errorf("exit %d\n%s", code, stderr)
	}
	if b, _ := os.ReadFile(path); string(b) != broken {
		t.Errorf("the file was changed: %s", b)
	}
	for _, p := range []string{path + ".mcptrunk-backup", h.configPath()} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s was written", p)
		}
	}
	_, stderr, code = h.run(t, "install", "--host", "claude-code", "--scope", "local")
	if code != 2 || !strings.Contains(stderr, "want user or project") {
		t.Errorf("--scope local: exit %d\n%s", code, stderr)
	}
	// Mistakes in the command line are usage errors: status 2, with help.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"install"}, "--host is required (one of: claude-desktop, claude-code"},
		{[]string{"uninstall"}, "--host is required"},
		{[]string{"install", "--host", "claude"}, `host "claude" could be claude-desktop (Claude Desktop) or claude-code (Claude Code)`},
		{[]string{"install", "--host", "emacs"}, `unknown host "emacs"`},
	} {
		_, stderr, code = h.run(t, c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, "--help") {
			t.Errorf("%q: exit %d, want 2 saying %q:\n%s", c.args, code, c.want, stderr)
		}
	}
}

// TestInstallCreatesHostFile: a host that keeps no file yet gets one,
// holding only mcptrunk's entry, and uninstall leaves it with no servers.
func TestInstallCreatesHostFile(t *testing.T) {
	h := newFakeHome(t)
	path := h.path(t, "windsurf", hostcfg.ScopeUser)
	h.expect(t, 0, []string{"Windsurf had no " + path + "; it was created.", "now starts mcptrunk"}, "install", "--host", "windsurf")
	hh, _ := hostcfg.HostByID("windsurf")
	data, _ := os.ReadFile(path)
	servers, err := hostcfg.Read(hostcfg.Location{Host: hh, Path: path, Scope: hostcfg.ScopeUser}, data, h.env())
	if err != nil || len(servers) != 1 || !servers[0].Self {
		t.Fatalf("the created file: %v\n%s", err, data)
	}
	h.expect(t, 0, []string{"Restored"}, "uninstall", "--host", "windsurf")
	if data, _ := os.ReadFile(path); string(data) != "{}\n" {
		t.Errorf("after uninstall the file is %q, want an empty object", data)
	}
}

// TestUninstallKeepsAdded: a server the user adds to the host's file
// after install is still there after uninstall, and said so; a kept
// entry changed since keeps its change, and the file from before install
// is kept in a backup that uninstall names.
func TestUninstallKeepsAdded(t *testing.T) {
	h := newFakeHome(t)
	path := h.path(t, "claude-desktop", hostcfg.ScopeUser)
	h.write(t, path, "{\n  \"mcpServers\": {\n    \"notes\": {\"command\": \""+notesBin+"\"},\n    \"odd\": {\"command\": \"o\", \"headersHelper\": \"/bin/a\"}\n  }\n}\n")
	h.expect(t, 0, []string{"+ notes"}, "install", "--host", "claude-desktop")
	installed, _ := os.ReadFile(path)
	edited := strings.Replace(string(installed), `"/bin/a"`, `"/bin/b"`, 1)
	edited = strings.Replace(edited, "\n  }\n}", ",\n    \"weather\": {\"command\": \"w\"}\n  }\n}", 1)
	if edited == string(installed) || !strings.Contains(edited, "/bin/b") {
		t.Fatalf("the edit did not apply to\n%s", installed)
	}
	h.write(t, path, edited)

	stdout := h.expect(t, 0, []string{"Kept 1 server added since install: weather.", "Kept the current entry of odd"}, "uninstall", "--host", "claude-desktop")
	after, _ := os.ReadFile(path)
	want := "{\n  \"mcpServers\": {\n    \"notes\": {\"command\": \"" + notesBin + "\"},\n    \"odd\": {\"command\": \"o\", \"headersHelper\": \"/bin/b\"},\n    \"weather\": {\"command\": \"w\"}\n  }\n}\n"
	if string(after) != want {
		t.Errorf("after uninstall:\n%s\nwant\n%s", after, want)
	}
	old, _ := filepath.Glob(path + ".mcptrunk-backup.*")
	if len(old) != 1 || !strings.Contains(stdout, old[0]) {
		t.Fatalf("backups %q, not named in\n%s", old, stdout)
	}
	if b, _ := os.ReadFile(old[0]); !strings.Contains(string(b), "/bin/a") {
		t.Errorf("the kept backup lacks the earlier entry:\n%s", b)
	}
	if _, err := os.Stat(path + ".mcptrunk-backup"); !os.IsNotExist(err) {
		t.Errorf("the backup is still where install looks for it: %v", err)
	}
}
