package main

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Claude Code, Codex and Gemini CLI, each configured with the README's
// own line (an entry "trunk" running serve --config, no --host-prefix),
// and a server with a 100-character tool: the go-sdk client presenting
// each host's clientInfo name is listed only names that fit the host's
// limit behind the prefix it puts before the trunk's tools (each written
// here as the host's own source has it), and the long tool's name routes
// to it; Claude Code at the 2025-era revision (initialize) and at the
// SDK's default (which probes the stateless revision first).
func TestHostNamesFitEachHost(t *testing.T) {
	cfg := writeConfig(t, map[string]server{"notes": notesServer("-long-names")}, nil)
	for _, c := range []struct {
		client, prefix string
		limit          int
		version        string
	}{
		{"claude-code", "mcp__trunk__", 64, "2025-11-25"},
		{"claude-code", "mcp__trunk__", 64, ""},
		{"codex-mcp-client", "mcp__trunk__", 64, ""},
		{"gemini-cli-mcp-client", "mcp_trunk_", 63, ""},
	} {
		t.Run(c.client+"/revision="+c.version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			client := mcp.NewClient(&mcp.Implementation{Name: c.client, Version: "1"}, nil)
			var opts *mcp.ClientSessionOptions
			if c.version != "" {
				opts = &mcp.ClientSessionOptions{ProtocolVersion: c.version}
			}
			h := dialHost(t, ctx, exec.Command(trunkBin, "serve", "--config", cfg), client, nil, opts, 0)
			names := waitTools(t, ctx, h.ClientSession, "mcp__notes__get_note")
			var long string
			for _, n := range names {
				if offered := c.prefix + n; len(offered) > c.limit {
					t.Errorf("%s would offer %q: %d characters, over %d", c.client, offered, len(offered), c.limit)
				}
				if strings.HasPrefix(n, "mcp__notes__long_0123") {
					long = n
				}
			}
			if long == "" {
				t.Fatalf("no name for notes' 100-character tool in %q", names)
			}
			want := callText(t, ctx, h.ClientSession, "mcp__notes__get_note", map[string]any{"id": "1"})
			if got := callText(t, ctx, h.ClientSession, long, map[string]any{"id": "1"}); got != want || got == "" {
				t.Errorf("%s answered %q, want get_note's %q", long, got, want)
			}
		})
	}
}
