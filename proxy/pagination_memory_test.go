package proxy

// A catalog larger than a page, end to end through the trunk with
// in-memory servers (moved from the raw client's part of cmd/mcptrunk's
// TestProtocolPagination, which ran three notes servers with 400 tools
// each; go-sdk's iterator over the same pages stays there).

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
)

func TestPaginationInMemory(t *testing.T) {
	set := memserver.Set{}
	var want []string
	for _, server := range []string{"n1", "n2", "n3"} {
		s := &memserver.Server{}
		for i := range 400 {
			name := fmt.Sprintf("tool_%03d", i)
			s.Tools = append(s.Tools, memserver.Tool(name, ""))
			want = append(want, "mcp__"+server+"__"+name)
		}
		set[server] = s
	}
	slices.Sort(want)
	_, h := memTrunk(t, set, nil, nil, nil)
	h.initialize(`{}`)

	var all []string
	var sizes []int
	params := `{}`
	for page := 0; ; page++ {
		if page == 10 {
			t.Fatal("more than 10 pages")
		}
		res, errObj := h.call("tools/list", params)
		var p struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor *string           `json:"nextCursor"`
		}
		if err := json.Unmarshal(res, &p); err != nil {
			t.Fatalf("tools/list %s: %s %s", params, res, errObj)
		}
		for _, tool := range p.Tools {
			name, _ := rawjson.StringField(tool, "name")
			all = append(all, name)
		}
		sizes = append(sizes, len(p.Tools))
		if p.NextCursor == nil {
			break
		}
		if *p.NextCursor == "" {
			t.Fatal("an empty nextCursor")
		}
		params = `{"cursor":` + mustQuote(*p.NextCursor) + `}`
	}
	if len(sizes) < 2 || sizes[0] != DefaultPageSize {
		t.Errorf("pages of %v: want a first page of %d and more pages", sizes, DefaultPageSize)
	}
	if !slices.IsSorted(all) {
		t.Errorf("the union of the pages is not sorted")
	}
	if len(slices.Compact(slices.Clone(all))) != len(all) {
		t.Errorf("tools listed twice across pages")
	}
	var upstream []string
	for _, n := range all {
		if !strings.HasPrefix(n, "mcp__trunk__") {
			upstream = append(upstream, n)
		}
	}
	if !slices.Equal(upstream, want) {
		t.Errorf("the pages hold %d upstream tools, want the %d the servers offer", len(upstream), len(want))
	}

	// A cursor the trunk never made is refused.
	if res, errObj := h.call("tools/list", `{"cursor":"%%%not-a-cursor"}`); errObj == nil || !strings.Contains(string(errObj), "-32602") {
		t.Errorf("tools/list with a bad cursor: %s %s", res, errObj)
	}
}
