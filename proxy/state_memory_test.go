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
