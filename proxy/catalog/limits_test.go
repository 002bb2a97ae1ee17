package catalog

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/testkit"
)

// A page never carries more bytes of items than the budget: it ends early
// with a cursor, and walking the cursors still yields every item once.
func TestCatalogPageSplitByBytes(t *testing.T) {
	names := make([]string, 50)
	for i := range names {
		names[i] = fmt.Sprintf("tool%02d", i)
	}
	cat := catWith(ListTools, names...)
	itemLen := len(cat.Lists[ListTools][0].Item)
	cat.maxPage = 7*(itemLen+1) + 3 // room for 7 items, not 8
	pages := catWalk(t, ListTools, 1000, func(int) *Catalog { return cat })
	size := map[string]int{}
	for _, e := range cat.Lists[ListTools] {
		size[e.Exported] = len(e.Item) + 1
	}
	var all []string
	for i, p := range pages {
		used := 0
		for _, name := range p {
			used += size[name]
		}
		if used > cat.maxPage {
			t.Errorf("page %d carries %d bytes of items, more than the budget of %d", i, used, cat.maxPage)
		}
		if i < len(pages)-1 && used+size[pages[i+1][0]] <= cat.maxPage {
			t.Errorf("page %d ended early: the next item would still have fitted", i)
		}
		all = append(all, p...)
	}
	if strings.Join(all, ",") != strings.Join(names, ",") {
		t.Errorf("walking the split pages gave %v, want every item once in order", all)
	}
	if len(pages) < 7 {
		t.Errorf("%d pages: the budget did not split the list", len(pages))
	}
}

// A definition larger than any page may be is left out of the list, and the
// log names it; the others stay.
func TestOversizedDefinitionLeftOut(t *testing.T) {
	var logs testkit.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	small := Entry{Exported: "mcp__a__small", Server: "a", Item: json.RawMessage(`{"name":"mcp__a__small"}`)}
	big := Entry{Exported: "mcp__b__big", Server: "b", Item: json.RawMessage(`{"name":"mcp__b__big","description":"` + strings.Repeat("d", 500) + `"}`)}
	got := dropOversized([]Entry{small, big}, "tools", 100, logger)
	if len(got) != 1 || got[0].Exported != small.Exported {
		t.Fatalf("kept %v, want only the small one", got)
	}
	if l := logs.String(); !strings.Contains(l, "mcp__b__big") || !strings.Contains(l, "server=b") || !strings.Contains(l, "trunk.maxMessageBytes") {
		t.Errorf("the log does not name the item, server and setting:\n%s", l)
	}
	if same := dropOversized([]Entry{small}, "tools", 100, logger); len(same) != 1 || same[0].Exported != small.Exported {
		t.Errorf("a list with nothing oversized changed: %v", same)
	}
}
