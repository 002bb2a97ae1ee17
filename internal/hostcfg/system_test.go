package hostcfg

import (
	"path/filepath"
	"strings"
	"testing"
)

// LocationsFor takes every host, one host, a host's file named with a
// HOST: prefix or by a name that says whose it is (a project's when it
// lies in one), and refuses a file whose host cannot be told.
func TestLocationsFor(t *testing.T) {
	all, err := LocationsFor("", testEnv)
	if err != nil || len(all) < len(Hosts) {
		t.Fatalf("every host: %d locations, %v", len(all), err)
	}
	cursor, _ := HostByID("cursor")
	if got, err := LocationsFor("cursor", testEnv); err != nil || len(got) != len(Locations(cursor, testEnv)) || got[0].Host != cursor {
		t.Errorf("one host: %+v, %v", got, err)
	}
	for _, c := range []struct {
		from, host, path string
		scope            Scope
		project          string
	}{
		{"claude-desktop:/tmp/servers.json", "claude-desktop", "/tmp/servers.json", ScopeUser, ""},
		{"/src/q/.mcp.json", "claude-code", "/src/q/.mcp.json", ScopeProject, "/src/q"},
		{"vscode:/src/q/.vscode/mcp.json", "vscode", "/src/q/.vscode/mcp.json", ScopeProject, "/src/q"},
		{"/src/q/.cursor/mcp.json", "cursor", "/src/q/.cursor/mcp.json", ScopeProject, "/src/q"},
	} {
		got, err := LocationsFor(c.from, testEnv)
		want := filepath.FromSlash(c.path)
		if err != nil || len(got) != 1 || got[0].Host.ID != c.host || !strings.HasSuffix(got[0].Path, want) ||
			got[0].Scope != c.scope || (got[0].Project == "") != (c.project == "") || !strings.HasSuffix(got[0].Project, filepath.FromSlash(c.project)) {
			t.Errorf("%s: %+v, %v", c.from, got, err)
		}
	}
	if _, err := LocationsFor("/x/servers.json", testEnv); err == nil || !strings.Contains(err.Error(), "HOST:/x/servers.json") {
		t.Errorf("a file of no host: %v", err)
	}
}

// ScopeLocation finds a host's file of a scope, and names the host that
// has none.
func TestScopeLocation(t *testing.T) {
	code, _ := HostByID("claude-code")
	if loc, err := ScopeLocation(code, ScopeProject, testEnv); err != nil || loc.Path != filepath.Join("/src/p", ".mcp.json") {
		t.Errorf("claude-code project: %+v, %v", loc, err)
	}
	desktop, _ := HostByID("claude-desktop")
	if _, err := ScopeLocation(desktop, ScopeProject, testEnv); err == nil || err.Error() != "Claude Desktop has no project-scope file" {
		t.Errorf("claude-desktop project: %v", err)
	}
}
