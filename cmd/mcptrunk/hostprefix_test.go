package main

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/hostcfg"
	"github.com/mcptrunk/mcptrunk/naming"
)

// TestNamesFitEveryHost: under the prefix install passes for each host
// that puts one before the trunk's names, every tool name of a long
// catalog (server-everything's longest, a 90-character one, and one of a
// long server name) is at most 64 characters as the model is offered it.
func TestNamesFitEveryHost(t *testing.T) {
	raws := []string{"trigger-long-running-operation", "get-resource-links", strings.Repeat("very_long_tool_name_", 9)}
	prefixed := 0
	for _, h := range hostcfg.Hosts {
		for _, trunkName := range []string{hostcfg.SelfName, "mcptrunk"} {
			prefix := h.ToolPrefix(trunkName)
			if prefix == "" {
				continue
			}
			prefixed++
			cfg := &config.Config{Trunk: config.TrunkOptions{MaxNameLength: 64}}
			fitHostPrefix(cfg, prefix, slog.New(slog.DiscardHandler))
			for _, server := range []string{"everything", "a_server_with_a_rather_long_name"} {
				names, err := naming.Assign(server, raws, cfg.Trunk.MaxNameLength)
				if err != nil {
					t.Fatal(err)
				}
				for raw, name := range names {
					if offered := prefix + name; len(offered) > naming.ModelNameLimit {
						t.Errorf("%s offers %s (%d characters) for %s's %q", h.Name, offered, len(offered), server, raw)
					}
				}
			}
		}
	}
	if prefixed == 0 {
		t.Fatal("no host has a known prefix")
	}
}

// TestFitHostPrefix: the budget only shrinks, never below the config's
// minimum, and not at all without a prefix.
func TestFitHostPrefix(t *testing.T) {
	logger := slog.New(slog.DiscardHandler)
	for _, c := range []struct {
		prefix     string
		configured int
		want       int
	}{
		{"", 64, 64},
		{"mcp__trunk__", 64, 52},
		{"mcp__trunk__", 40, 40},
		{"mcp__trunk__", 0, 52},
		{strings.Repeat("p", 50), 64, 32},
	} {
		cfg := &config.Config{Trunk: config.TrunkOptions{MaxNameLength: c.configured}}
		fitHostPrefix(cfg, c.prefix, logger)
		if cfg.Trunk.MaxNameLength != c.want {
			t.Errorf("prefix %q, configured %d: budget %d, want %d", c.prefix, c.configured, cfg.Trunk.MaxNameLength, c.want)
		}
	}
}
