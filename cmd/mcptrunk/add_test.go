package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/hostcfg"
)

// TestAddCommandAndRemove: add NAME -- COMMAND puts a server that runs a
// command into the config (made where import makes it, when there is
// none), list then serves its tools, and remove takes it out again, each
// with a backup and every other byte kept.
func TestAddCommandAndRemove(t *testing.T) {
	h := newFakeHome(t)
	cfg := h.configPath()
	h.expect(t, 0, []string{`"mine"`, "Added 1 server to " + cfg}, "add", "mine", "--", notesBin, "--tools", "1")
	// The arguments after the command are the server's: --tools 1 gives it
	// an extra tool.
	h.expect(t, 0, []string{"mcp__mine__echo", "mcp__mine__extra_000"}, "list")

	// A remote one, beside it: the header's value is written, never shown.
	stdout := h.expect(t, 0, []string{`"url":"https://docs.example.com/mcp"`, "docs: header Authorization"},
		"add", "docs", "--url", "https://docs.example.com/mcp", "--header", "Authorization: Bearer "+hostFilesSecret)
	if st, _ := os.Stat(cfg); st.Mode().Perm() != 0o600 {
		t.Errorf("a config with a secret is %#o, want 0600", st.Mode().Perm())
	}
	if !strings.Contains(stdout, `"${NAME}"`) {
		t.Errorf("add does not say how to move the secret out:\n%s", stdout)
	}
	withBoth, _ := os.ReadFile(cfg)

	h.expect(t, 0, []string{`Removed "mine" from ` + cfg, "Backed up"}, "remove", "mine")
	after, _ := os.ReadFile(cfg)
	if strings.Contains(string(after), "mine") || !strings.Contains(string(after), `"docs"`) {
		t.Errorf("after remove mine:\n%s", after)
	}
	backups, _ := filepath.Glob(cfg + ".bak-*")
	found := false
	for _, b := range backups {
		if data, _ := os.ReadFile(b); string(data) == string(withBoth) {
			found = true
		}
	}
	if !found {
		t.Errorf("no backup holds the config as it was before remove: %q", backups)
	}
	if _, stderr, code := h.run(t, "remove", "mine"); code != 1 || !strings.Contains(stderr, `there is no server named "mine"; the config has docs`) {
		t.Errorf("remove mine again: exit %d\n%s", code, stderr)
	}
}

// TestAddRefuses: what add cannot do is refused before anything is
// written, mistakes in the command line with status 2.
func TestAddRefuses(t *testing.T) {
	h := newFakeHome(t)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"add", "mine", "./server"}, 2, "to add a server that runs a command: mcptrunk add NAME -- COMMAND [ARGS...]"},
		{[]string{"add", "mine", "--"}, 2, "-- needs the COMMAND to run after it"},
		{[]string{"add", "mine", "--url", "https://x.example.com/mcp", "--", "x"}, 2, "not both"},
		{[]string{"add", "mine", "--header", "A: b", "--", "x"}, 2, "--header is for a remote server"},
		{[]string{"add", "mine", "--url", "https://x.example.com/mcp", "--env", "A=b"}, 2, "--env is for a server that runs a command"},
		{[]string{"add", "mine", "--env", "A", "--", "x"}, 2, "--env #1: want NAME=value"},
		{[]string{"add", "mine", "--", "./no-such-server"}, 1, "no-such-server: no such file"},
	} {
		_, stderr, code := h.run(t, c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, want %d saying %q:\n%s", c.args, code, c.code, c.want, stderr)
		}
	}
	if _, err := os.Stat(h.configPath()); !os.IsNotExist(err) {
		t.Errorf("a refused add wrote the config: %v", err)
	}
}

// TestImportKeepsSecretsSecret: a host's literal token imported into a
// config others can read makes it readable by the user alone, and import
// names the entry, never the value, with how to move it out.
func TestImportKeepsSecretsSecret(t *testing.T) {
	h := newFakeHome(t)
	path := h.path(t, "claude-desktop", hostcfg.ScopeUser)
	h.write(t, path, `{"mcpServers": {"gh": {"command": "`+notesBin+`", "env": {"GITHUB_TOKEN": "`+hostFilesSecret+`"}}}}`)
	cfg := h.configPath()
	h.write(t, cfg, `{"mcpServers": {}}`)
	if err := os.Chmod(cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	h.expect(t, 0, []string{"+ gh", "now readable by you only (it was 0644, now 0600)", "gh: env GITHUB_TOKEN", `"${NAME}"`}, "import", "--write")
	if st, _ := os.Stat(cfg); st.Mode().Perm() != 0o600 {
		t.Errorf("the config is %#o after importing a token, want 0600", st.Mode().Perm())
	}
}
