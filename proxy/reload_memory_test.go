package proxy

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
)

// A reload that changes the entry of a server with instances of its own
// ("scope": "session" here; per-user credentials share the mechanism)
// stops the instance a session already has: the session's next call starts
// one from the new entry rather than going on with the old one.
func TestReloadRestartsOwnInstances(t *testing.T) {
	set := memserver.Set{"own": {
		Tools: []json.RawMessage{memserver.Tool("work", "")},
		Handle: func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
			return memserver.Text("done"), nil
		},
	}}
	tr, _ := memTrunk(t, set, map[string]map[string]any{"own": {"scope": "session"}}, nil, nil)
	tr.Share()
	h := &memHost{pipeHost: attachPipes(t, tr, &SessionOptions{ID: "one"})}
	h.initialize(`{}`)
	call := func() {
		t.Helper()
		if res, errObj := h.call("tools/call", `{"name":"mcp__own__work","arguments":{}}`); res == nil {
			t.Fatalf("calling work: %s", errObj)
		}
	}
	call()
	if got := set["own"].Dials(); got != 2 {
		t.Fatalf("%d dials before the reload, want 2 (the shared instance, the session's own)", got)
	}
	changed := map[string]map[string]any{"own": {"scope": "session", "env": map[string]string{"MODE": "new"}}}
	if err := tr.Reload(context.Background(), memConfig(t, set, changed, nil)); err != nil {
		t.Fatalf("reload: %v", err)
	}
	call()
	if got := set["own"].Dials(); got != 4 {
		t.Errorf("%d dials after the reload and a call, want 4 (the shared instance restarted, and the session's own started anew from the changed entry)", got)
	}
}
