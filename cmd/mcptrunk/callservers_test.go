package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
)

// TestCallServers: which servers `call` starts for a name.
func TestCallServers(t *testing.T) {
	off := false
	plain := func(name string) config.Spec { return config.Spec{Name: name, Namespace: &off} }
	cfg := &config.Config{
		Trunk: config.TrunkOptions{Prefix: "mcp__"},
		Servers: []config.Spec{
			{Name: "hang"}, {Name: "notes"}, {Name: "My Notes"}, plain("cached"), plain("uncached"),
			{Name: "plain-off", Namespace: &off, Disabled: true},
		},
	}
	cfg.Servers[3].Overrides.Tools = map[string]config.ToolOverride{"echo": {Name: "say"}}
	cache := map[string][]string{"cached": {"echo", "mcp__hang__x"}}
	cached := func(s config.Spec) ([]string, bool) {
		tools, ok := cache[s.Name]
		return tools, ok
	}
	cases := map[string]string{
		"mcp__notes__echo":    "notes,uncached",
		"mcp__My_Notes__echo": "My Notes,uncached",
		"mcp__hang__x":        "hang,cached,uncached", // both may claim it: the claims decide, as in serve
		"echo":                "cached,uncached",
		"say":                 "cached,uncached", // echo renamed
		"mcp__nope__echo":     "uncached",
		"mcp__trunk__status":  "hang,notes,My Notes,cached,uncached,plain-off",
	}
	for name, want := range cases {
		var got []string
		for _, s := range callServers(cfg, name, cached) {
			got = append(got, s.Name)
		}
		if strings.Join(got, ",") != want {
			t.Errorf("%s: %q, want %s", name, got, want)
		}
	}
	// No owner at all in the cache: the live catalogs decide.
	cfg.Servers = cfg.Servers[:4]
	if got := callServers(cfg, "mcp__nope__echo", cached); len(got) != 1 || got[0].Name != "cached" {
		t.Errorf("no owner: %+v", got)
	}
	// Another prefix.
	cfg.Trunk.Prefix = ""
	cfg.Servers = cfg.Servers[:2]
	if got := callServers(cfg, "notes__echo", cached); len(got) != 1 || got[0].Name != "notes" {
		t.Errorf("no prefix: %+v", got)
	}
}

// TestCallStartsOnlyItsServer: `mcptrunk call` to one server answers
// without starting a server that never answers, whether the name says its
// server or a server without a namespace owns it by the catalog cache.
func TestCallStartsOnlyItsServer(t *testing.T) {
	t.Parallel()
	started := filepath.Join(t.TempDir(), "hang-started")
	hang := chaosServer("-mode", "hang-init", "-state-file", started)
	hang["timeouts"] = map[string]any{"connect": "20s"}
	plain := notesServer()
	plain["namespace"] = false
	plain["env"] = map[string]string{"MCPTRUNK_TEST": t.Name()} // a cache entry of its own
	// The plain server's catalog in the cache, as any earlier run leaves it.
	runCLI(t, 60*time.Second, "list", "--config", writeConfig(t, map[string]server{"plain": plain}, nil))
	cfg := writeConfig(t, map[string]server{"hang": hang, "notes": notesServer(), "plain": plain}, nil)

	for _, name := range []string{"mcp__notes__echo", "echo"} {
		stdout, stderr, code := runCLI(t, 60*time.Second, "call", "--config", cfg, name, `{"text":"still here"}`)
		if code != 0 || !strings.Contains(stdout, "still here") {
			t.Errorf("call %s: exit %d\nstdout:\n%s\nstderr:\n%s", name, code, stdout, stderr)
		}
		if _, err := os.Stat(started); !os.IsNotExist(err) {
			t.Fatalf("call %s started the server that never answers (%v)", name, err)
		}
	}
}
