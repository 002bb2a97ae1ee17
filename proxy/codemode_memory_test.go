package proxy

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
	"github.com/mcptrunk/mcptrunk/proxy/codemode"
	"github.com/mcptrunk/mcptrunk/proxy/observe"
)

// innerCalls is an observer that passes on each tools/call a code-mode
// run made, when it ends.
type innerCalls chan observe.Request

func (o innerCalls) Begin(ctx context.Context, r observe.Request) (context.Context, func(observe.Outcome)) {
	return ctx, func(observe.Outcome) {
		if r.Run != "" {
			o <- r
		}
	}
}

// Cancelling a run_code call cancels the calls its program has in
// flight, upstream; each inner call is observed as the session's own,
// with the run's id and no JSON-RPC id.
func TestCodeModeCancelReachesInnerCalls(t *testing.T) {
	started, cancelled := make(chan struct{}, 2), make(chan struct{}, 2)
	slow := &memserver.Server{
		Tools: []json.RawMessage{memserver.Tool("wait", "Wait until cancelled.")},
		Handle: func(ctx context.Context, method string, _ json.RawMessage) (json.RawMessage, error) {
			if method != "tools/call" {
				return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "no %s", method)
			}
			started <- struct{}{}
			<-ctx.Done()
			cancelled <- struct{}{}
			return nil, ctx.Err()
		},
	}
	inner := make(innerCalls, 2)
	_, h := memTrunk(t, memserver.Set{"slow": slow}, nil, map[string]any{"codeMode": map[string]any{"enabled": true}},
		&Options{Observers: []observe.Observer{inner}, RunProgram: codemode.Local})
	h.initialize(`{}`)
	h.tools()
	h.send(`{"jsonrpc":"2.0","id":"r1","method":"tools/call","params":{"name":"mcp__trunk__run_code","arguments":{"code":"await Promise.all([call(\"mcp__slow__wait\"), tools.slow.wait({})]);"}}}`)
	wait := func(ch chan struct{}, what string) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("no %s", what)
		}
	}
	wait(started, "first inner call")
	wait(started, "second inner call")
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r1"}}`)
	wait(cancelled, "cancellation of the first inner call")
	wait(cancelled, "cancellation of the second inner call")
	var run string
	for range 2 {
		select {
		case r := <-inner:
			if r.Method != "tools/call" || r.Item != "mcp__slow__wait" || r.Server != "slow" || r.ID != nil || (run != "" && r.Run != run) {
				t.Errorf("inner call observed as %+v", r)
			}
			run = r.Run
		case <-time.After(10 * time.Second):
			t.Fatal("an inner call was not observed")
		}
	}
}
