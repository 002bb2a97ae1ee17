package naming

import (
	"strings"
	"testing"
)

// TestHostBudgetFitsEachHost: for each host known to prefix, every name
// Assign gives under the host's budget (a 100-character tool, one of a
// long server, and a short one) is at most the host's limit long behind
// the prefix the host puts before the trunk's names; a host not known to
// prefix adds no constraint.
func TestHostBudgetFitsEachHost(t *testing.T) {
	long := ("long_" + strings.Repeat("0123456789", 10))[:100]
	want := map[string]int{"claude-code": 52, "codex-mcp-client": 52, "gemini-cli-mcp-client": 53}
	for client, budget := range want {
		h, ok := HostOf(client)
		if !ok {
			t.Fatalf("HostOf(%q): not known", client)
		}
		if got := HostBudget(client); got != budget {
			t.Errorf("HostBudget(%q) = %d, want %d", client, got, budget)
		}
		for _, server := range []string{"notes", "a_rather_long_server_name"} {
			names, err := Assign(server, []string{long, "search"}, h.Budget())
			if err != nil {
				t.Fatalf("%s: Assign: %v", client, err)
			}
			for raw, name := range names {
				if offered := h.Prefix(AssumedTrunkName) + name; len(offered) > h.Limit {
					t.Errorf("%s offers %q for %q: %d characters, over %d", client, offered, raw, len(offered), h.Limit)
				}
			}
			if names["search"] != "mcp__"+server+"__search" {
				t.Errorf("%s: a short name changed: %q", client, names["search"])
			}
		}
	}
	for _, client := range []string{"", "claude-ai", "mcp", "Claude-Code"} {
		if got := HostBudget(client); got != 0 {
			t.Errorf("HostBudget(%q) = %d, want 0 (not known to prefix)", client, got)
		}
	}
}

// TestFitPrefix: the budget is what the limit leaves after the prefix,
// never below MinBudget, and says when the prefix is too long to fit.
func TestFitPrefix(t *testing.T) {
	for _, c := range []struct {
		prefix string
		budget int
		fits   bool
	}{
		{"mcp__trunk__", 52, true},
		{"mcp_trunk_", 54, true},
		{"", 64, true},
		{strings.Repeat("p", 32), 32, true},
		{strings.Repeat("p", 40), MinBudget, false},
	} {
		budget, fits := FitPrefix(c.prefix, ModelNameLimit)
		if budget != c.budget || fits != c.fits {
			t.Errorf("FitPrefix(%q) = %d, %v; want %d, %v", c.prefix, budget, fits, c.budget, c.fits)
		}
	}
}
