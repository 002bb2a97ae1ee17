package main

//lint:file-ignore SA1019 roots, sampling and logging are deprecated by the 2026-07-28 revision (SEP-2577), but the trunk still carries them for 2025-era hosts and servers, and these tests keep that working.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// "scope": "session": each host session on a shared trunk gets its own
// instance of the server, told its own roots. server-filesystem takes its
// allowed directories from the client's roots: two hosts with different
// roots each see their own directory, never the other's; the instance
// stops when its session ends, while a shared server keeps one process.
func TestHTTPSessionScope(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 2*time.Minute)
	node, _, filesystem := npmServers(t)
	placeholder := t.TempDir() // the shared instance's, for the catalog
	cfg := writeConfig(t, map[string]server{
		"fs":    {"command": node, "args": []string{filesystem, placeholder}, "scope": "session"},
		"notes": notesServer(),
	}, nil)
	trunk := startHTTPTrunk(t, ctx, cfg)
	isFS := func(p procInfo) bool {
		return tagged(trunk.tag)(p) && strings.Contains(p.cmdline, "server-filesystem")
	}

	type host struct {
		dir string
		cs  *mcp.ClientSession
	}
	hosts := make([]*host, 2)
	for i := range hosts {
		dir := filepath.Join(t.TempDir(), fmt.Sprintf("host-%d", i))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		client := mcp.NewClient(&mcp.Implementation{Name: fmt.Sprintf("host-%d", i), Version: "0"}, nil)
		client.AddRoots(&mcp.Root{URI: "file://" + dir, Name: "work"})
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: trunk.url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		hosts[i] = &host{dir: dir, cs: cs}
	}
	allowed := func(h *host) string {
		res, err := h.cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__fs__list_allowed_directories", Arguments: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		return toolText(res)
	}
	for i, h := range hosts {
		other := hosts[1-i]
		var got string
		// The server asks for the roots once it is initialized: wait for
		// it to have taken them.
		if !waitFor(ctx, 30*time.Second, func() bool {
			got = allowed(h)
			return strings.Contains(got, h.dir)
		}) {
			t.Fatalf("host-%d's own instance allows %q, want its root %s", i, got, h.dir)
		}
		if strings.Contains(got, other.dir) || strings.Contains(got, placeholder) {
			t.Errorf("host-%d sees %q: another host's root or the shared instance's directory", i, got)
		}
	}
	// A shared server is called by both and runs once.
	for _, h := range hosts {
		if _, err := h.cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__notes__echo", Arguments: map[string]any{"text": "x"}}); err != nil {
			t.Fatal(err)
		}
	}
	notes := processes(func(p procInfo) bool { return tagged(trunk.tag)(p) && strings.Contains(p.cmdline, "mcptrunk-notes") })
	if len(notes) != 1 {
		t.Errorf("%d notes processes for two sessions, want the one shared: %v", len(notes), notes)
	}
	if fs := processes(isFS); len(fs) != 3 {
		t.Errorf("%d filesystem processes, want 3 (the shared one for the catalog, one per session): %v", len(fs), fs)
	}
	// The first session ends: its instance stops, the other's stays.
	if err := hosts[0].cs.Close(); err != nil {
		t.Fatal(err)
	}
	if !waitFor(ctx, 20*time.Second, func() bool { return len(processes(isFS)) == 2 }) {
		t.Errorf("the ended session's instance still runs: %v", processes(isFS))
	}
	if got := allowed(hosts[1]); !strings.Contains(got, hosts[1].dir) {
		t.Errorf("after the other session ended, host-1's instance allows %q", got)
	}
}
