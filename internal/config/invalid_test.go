package config

import (
	"errors"
	"strings"
	"testing"
)

// TestUnusableEntryCostsOnlyItsServer: an unset variable or a bad field in
// one server's entry leaves that server with Invalid (naming the field and
// the variable, never a value) and the rest of the config loaded; what
// concerns the whole file still fails it.
func TestUnusableEntryCostsOnlyItsServer(t *testing.T) {
	lookup := mapLookup(map[string]string{"SET": "SUPERSECRET"})
	cfg, err := Parse(strings.NewReader(`{"mcpServers": {
		"gh": {"url": "https://api.example.com/mcp", "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}", "X-Key": "${SET}"}},
		"bad": {"command": "c", "args": "--flag", "timeouts": {"call": "soon"}},
		"notes": {"command": "notes", "env": {"K": "${SET}"}}
	}}`), lookup)
	if err != nil {
		t.Fatalf("Parse failed for the whole config: %v", err)
	}
	byName := map[string]Spec{}
	for _, s := range cfg.Servers {
		byName[s.Name] = s
	}
	if s := byName["notes"]; s.Invalid != nil || s.Command != "notes" {
		t.Errorf("notes: %+v, want a usable entry", s)
	}
	gh := byName["gh"].Invalid
	if gh == nil || gh.Error() != `config entry: headers.Authorization: variable "GITHUB_TOKEN" is not set` {
		t.Errorf("gh: Invalid = %v", gh)
	}
	bad := byName["bad"].Invalid
	if bad == nil || bad.Error() != `config entry: args: want array of strings, got string; timeouts.call: time: invalid duration "soon"` {
		t.Errorf("bad: Invalid = %v", bad)
	}
	all := cfg.Unusable()
	want := `server "bad": args: want array of strings, got string
server "bad": timeouts.call: time: invalid duration "soon"
server "gh": headers.Authorization: variable "GITHUB_TOKEN" is not set`
	if all == nil || all.Error() != want {
		t.Errorf("Unusable() =\n%v\nwant\n%s", all, want)
	}
	if strings.Contains(all.Error(), "SUPERSECRET") {
		t.Error("an error quotes a value")
	}
	if !errors.Is(all, bad.Problems[0]) {
		t.Error("Unusable does not wrap the problems")
	}

	// ParseAll refuses it; Parse still refuses what concerns the file,
	// listing the entries' problems beside.
	if _, err := ParseAll(strings.NewReader(`{"mcpServers": {"gh": {"url": "${NOPE}"}}}`), noEnv); err == nil {
		t.Error("ParseAll accepted an unusable entry")
	}
	_, err = Parse(strings.NewReader(`{"mcpServers": {"gh": {"url": "${NOPE}"}}, "trunk": {"concurrency": -1}}`), noEnv)
	if err == nil || !strings.Contains(err.Error(), "trunk.concurrency") || !strings.Contains(err.Error(), `server "gh": url: variable "NOPE" is not set`) {
		t.Errorf("Parse with bad trunk options: %v", err)
	}
}
