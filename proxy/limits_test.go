package proxy

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/testkit"
)

// A page never carries more bytes of items than the budget: it ends early
// with a cursor, and walking the cursors still yields every item once.
func TestCatalogPageSplitByBytes(t *testing.T) {
	names := make([]string, 50)
	for i := range names {
		names[i] = fmt.Sprintf("tool%02d", i)
	}
	cat := catWith(listTools, names...)
	itemLen := len(cat.lists[listTools][0].item)
	cat.maxPage = 7*(itemLen+1) + 3 // room for 7 items, not 8
	pages := catWalk(t, listTools, 1000, func(int) *catalog { return cat })
	size := map[string]int{}
	for _, e := range cat.lists[listTools] {
		size[e.exported] = len(e.item) + 1
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
	small := entry{exported: "mcp__a__small", server: "a", item: json.RawMessage(`{"name":"mcp__a__small"}`)}
	big := entry{exported: "mcp__b__big", server: "b", item: json.RawMessage(`{"name":"mcp__b__big","description":"` + strings.Repeat("d", 500) + `"}`)}
	got := dropOversized([]entry{small, big}, "tools", 100, logger)
	if len(got) != 1 || got[0].exported != small.exported {
		t.Fatalf("kept %v, want only the small one", got)
	}
	if l := logs.String(); !strings.Contains(l, "mcp__b__big") || !strings.Contains(l, "server=b") || !strings.Contains(l, "trunk.maxMessageBytes") {
		t.Errorf("the log does not name the item, server and setting:\n%s", l)
	}
	if same := dropOversized([]entry{small}, "tools", 100, logger); len(same) != 1 || same[0].exported != small.exported {
		t.Errorf("a list with nothing oversized changed: %v", same)
	}
}

// Params of the wrong shape are refused naming the member, before anything
// is routed.
func TestParamsShapeErrors(t *testing.T) {
	for _, tc := range []struct{ params, want string }{
		{``, `tools/call: params are missing`},
		{`[1]`, `tools/call: params must be an object, got an array`},
		{`{}`, `tools/call: params.name is missing (the tool's name)`},
		{`{"name":5}`, `tools/call: params.name must be a string (the tool's name), got a number`},
		{`{"name":""}`, `tools/call: params.name is empty (the tool's name)`},
	} {
		_, err := requiredString("tools/call", json.RawMessage(tc.params), "name", "the tool's name")
		if e := jsonrpc.AsError(err); e == nil || e.Code != jsonrpc.CodeInvalidParams || e.Message != tc.want {
			t.Errorf("params %s: %v, want -32602 %q", tc.params, err, tc.want)
		}
	}
	if name, err := requiredString("tools/call", json.RawMessage(`{"name":"x"}`), "name", ""); err != nil || name != "x" {
		t.Errorf("a good name: %q, %v", name, err)
	}
	for params, ok := range map[string]bool{`{"name":"x"}`: true, `{"arguments":null}`: true, `{"arguments":{}}`: true, `{"arguments":"x"}`: false, `{"arguments":[1]}`: false} {
		err := optionalObject("tools/call", json.RawMessage(params), "arguments")
		if (err == nil) != ok {
			t.Errorf("arguments in %s: %v", params, err)
		}
		if err != nil && !strings.Contains(err.Error(), "params.arguments must be an object") {
			t.Errorf("arguments in %s: %v does not name the member", params, err)
		}
	}
}
