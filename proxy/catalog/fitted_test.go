package catalog

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/naming"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// TestFittedToHost: the catalog fitted to Claude Code's budget names every
// tool so that Claude Code's prefix and the name fit in 64 characters,
// routes each name back to its server and upstream name, keeps the names
// that already fit, and is built once per budget; a budget at or above
// the catalog's own is the catalog itself.
func TestFittedToHost(t *testing.T) {
	long := ("long_" + strings.Repeat("0123456789", 10))[:100]
	medium := strings.Repeat("m", 45) // fits 64, not Claude Code's 52
	cat := Build(Input{
		Servers: []Server{{Name: "notes", Spec: config.Spec{Name: "notes"},
			Items: upstream.Catalog{Tools: catItems("name", long, medium, "search")}, Listed: true, Settled: true}},
		Policy: PolicyOf(config.TrunkOptions{Prefix: naming.Default.Prefix, MaxNameLength: 64}),
		Logger: slog.New(slog.DiscardHandler),
	})
	h, _ := naming.HostOf("claude-code")
	fitted := cat.Fitted(h.Budget())
	if fitted == cat {
		t.Fatal("Fitted(52) of a catalog built under 64 is the catalog itself")
	}
	prefix := h.Prefix(naming.AssumedTrunkName)
	raws := map[string]bool{}
	for _, e := range fitted.Lists[ListTools] {
		if offered := prefix + e.Exported; len(offered) > naming.ModelNameLimit {
			t.Errorf("Claude Code offers %q: %d characters", offered, len(offered))
		}
		server, ok := fitted.NameOwner(ListTools, e.Exported)
		if !ok || server != "notes" {
			t.Errorf("NameOwner(%q) = %q, %v", e.Exported, server, ok)
		}
		raw := fitted.Tools[server][e.Exported]
		if raw != e.Raw {
			t.Errorf("%q routes to %q, want %q", e.Exported, raw, e.Raw)
		}
		raws[raw] = true
		if !strings.Contains(string(e.Item), `"name":"`+e.Exported+`"`) {
			t.Errorf("item %s does not carry its fitted name %q", e.Item, e.Exported)
		}
	}
	if len(raws) != 3 {
		t.Errorf("fitted catalog routes to %v, want all three tools", raws)
	}
	if _, ok := fitted.Tools["notes"][naming.Default.Name("notes", "search")]; !ok {
		t.Error("a name that fits changed in the fitted catalog")
	}
	if _, ok := cat.Tools["notes"][naming.Default.Name("notes", medium)]; !ok {
		t.Error("the catalog itself lost its own name for the 45-character tool")
	}
	if again := cat.Fitted(h.Budget()); again != fitted {
		t.Error("Fitted built the same budget twice: a host's names could differ between requests")
	}
	for _, n := range []int{0, 64, 80} {
		if got := cat.Fitted(n); got != cat {
			t.Errorf("Fitted(%d) is another catalog, want the catalog itself", n)
		}
	}
}
