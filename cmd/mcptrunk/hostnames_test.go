package main

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptrunk/mcptrunk/naming"
)

// Claude Code configured with the README's own line (serve --config, no
// --host-prefix) and a server with a 100-character tool: the go-sdk client
// presenting clientInfo "claude-code" is listed only names that fit 64
// characters behind Claude Code's mcp__trunk__, and the long tool's name
// routes to it; at the 2025-era revision (initialize) and at the SDK's
// default (which probes the stateless revision first).
func TestHostNamesClaudeCode(t *testing.T) {
	cfg := writeConfig(t, map[string]server{"notes": notesServer("-long-names")}, nil)
	prefix := "mcp__" + naming.AssumedTrunkName + "__"
	for _, version := range []string{"2025-11-25", ""} {
		t.Run("revision="+version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			client := mcp.NewClient(&mcp.Implementation{Name: "claude-code", Version: "2.1.328"}, nil)
			var opts *mcp.ClientSessionOptions
			if version != "" {
				opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
			}
			h := dialHost(t, ctx, exec.Command(trunkBin, "serve", "--config", cfg), client, nil, opts, 0)
			names := waitTools(t, ctx, h.ClientSession, "mcp__notes__get_note")
			var long string
			for _, n := range names {
				if offered := prefix + n; len(offered) > naming.ModelNameLimit {
					t.Errorf("Claude Code would offer %q: %d characters", offered, len(offered))
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
