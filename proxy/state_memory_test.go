package proxy

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
)

// A reload that lands while a request is in flight does not reach into
// it: the request, admitted under one generation, has its result judged
// under that generation's trunk.maxMessageBytes, not the next one's. The
// request after it runs under the new generation.
func TestReloadMidRequestKeepsTheRequestsGeneration(t *testing.T) {
	const small, large = config.MinMessageBytes, 1 << 20
	text := strings.Repeat("x", 2*small) // over the first generation's limit, well under the second's
	var (
		tr       *Trunk
		set      memserver.Set
		reloaded atomic.Bool
	)
	set = memserver.Set{"big": {
		Tools: []json.RawMessage{memserver.Tool("dump", "")},
		Handle: func(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, error) {
			if !reloaded.Swap(true) {
				// Between the request's admission and its answer.
				if err := tr.Reload(ctx, memConfig(t, set, nil, map[string]any{"maxMessageBytes": large})); err != nil {
					return nil, err
				}
			}
			return memserver.Text(text), nil
		},
	}}
	tr, h := memTrunk(t, set, nil, map[string]any{"maxMessageBytes": small}, nil)
	h.initialize(`{}`)
	call := func() string {
		t.Helper()
		res, errObj := h.call("tools/call", `{"name":"mcp__big__dump","arguments":{}}`)
		if res == nil {
			t.Fatalf("calling dump: %s", errObj)
		}
		return string(res)
	}

	first := call()
	if !reloaded.Load() {
		t.Fatal("the tool never ran, so no reload happened mid-request")
	}
	if !strings.Contains(first, `"isError":true`) || !strings.Contains(first, strconv.Itoa(small)) {
		t.Errorf("the request begun under maxMessageBytes %d was answered as if under the reload's %d: got %.200s", small, large, first)
	}
	if second := call(); !strings.Contains(second, text) {
		t.Errorf("the request after the reload was not served under its maxMessageBytes %d: got %.200s", large, second)
	}
}

// A generation's catalog is rebuilt after a server change under that
// generation's export policy, not the one in force: a request begun
// before a reload that changed trunk.prefix still finds names as its
// generation exports them, and one begun after finds them the new way.
func TestStateCatalogIsItsGenerations(t *testing.T) {
	set := memserver.Set{"notes": {Tools: []json.RawMessage{memserver.Tool("echo", "")}}}
	tr, h := memTrunk(t, set, nil, nil, nil)
	h.initialize(`{}`)
	if res, errObj := h.call("tools/list", `{}`); !strings.Contains(string(res), `"mcp__notes__echo"`) {
		t.Fatalf("tools/list: %s %s", res, errObj)
	}
	old := tr.state.Load()
	if err := tr.Reload(context.Background(), memConfig(t, set, nil, map[string]any{"prefix": ""})); err != nil {
		t.Fatalf("reload: %v", err)
	}
	now := tr.state.Load()
	if now == old {
		t.Fatal("the reload did not replace the state")
	}
	tr.serverChanged("notes") // both generations' catalogs are stale now
	for _, c := range []struct {
		name  string
		st    *state
		names map[string]bool // exported name: exported
	}{
		{"the old generation", old, map[string]bool{"mcp__notes__echo": true, "notes__echo": false}},
		{"the new generation", now, map[string]bool{"notes__echo": true, "mcp__notes__echo": false}},
	} {
		cat := c.st.catalog()
		if got, want := c.st.built.Load(), tr.changes.Load(); got != want {
			t.Errorf("%s's catalog includes %d server changes, want all %d", c.name, got, want)
		}
		for name, want := range c.names {
			if _, found := cat.Tools["notes"][name]; found != want {
				t.Errorf("%s's catalog exports %q: %v, want %v", c.name, name, found, want)
			}
		}
	}
}
