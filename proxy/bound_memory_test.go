package proxy

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
)

// TestOversizedResultRefusedInMemory: under trunk.maxMessageBytes 65536 a
// tool result of 100,000 bytes reaches the host as a tool error naming the
// tool, its server, the size and the setting, never as the result; one
// within the limit passes untouched.
func TestOversizedResultRefusedInMemory(t *testing.T) {
	_, h := memTrunk(t, memserver.Set{"notes": blobServer()}, nil, map[string]any{"maxMessageBytes": 65536}, nil)
	h.initialize(`{}`)

	res, errObj := h.call("tools/call", `{"name":"mcp__notes__blob","arguments":{"bytes":100000}}`)
	var r cutResult
	if err := json.Unmarshal(res, &r); err != nil || !r.IsError || len(r.Content) != 1 {
		t.Fatalf("the oversized result: %.300s %s", res, errObj)
	}
	for _, want := range []string{`"mcp__notes__blob"`, `server "notes"`, "trunk.maxMessageBytes (65536)"} {
		if !strings.Contains(r.Content[0].Text, want) {
			t.Errorf("the error does not say %s: %s", want, r.Content[0].Text)
		}
	}

	res, _ = h.call("tools/call", `{"name":"mcp__notes__blob","arguments":{"bytes":1000}}`)
	var within cutResult
	if err := json.Unmarshal(res, &within); err != nil || within.IsError || len(within.Content) != 1 || within.Content[0].Text != blobText(1000) {
		t.Errorf("a result within the limit: %.300s", res)
	}
}
