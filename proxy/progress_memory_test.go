package proxy

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
	"github.com/mcptrunk/mcptrunk/proxy/translate"
)

// lateProgressServer has three tools. work sends progress "during" with its
// call's token and answers; hang waits for its call's cancel, then sends
// progress "after cancel" with the call's token (as a server that writes a
// queued notification late does) and closes cancelled; poke sends progress
// "late" with each token its arguments list, "task" with the token its
// argument task names and the related-task _meta of a task, then "poke"
// with its own call's token, and answers.
func lateProgressServer() (srv *memserver.Server, started, cancelled chan struct{}) {
	started, cancelled = make(chan struct{}), make(chan struct{})
	srv = &memserver.Server{Tools: []json.RawMessage{
		json.RawMessage(`{"name":"work","inputSchema":{"type":"object"}}`),
		json.RawMessage(`{"name":"hang","inputSchema":{"type":"object"}}`),
		json.RawMessage(`{"name":"poke","inputSchema":{"type":"object"}}`),
	}}
	progress := func(token json.RawMessage, message string) error {
		note, _ := json.Marshal(map[string]any{"progressToken": token, "progress": 1, "message": message})
		return srv.Conn().Notify("notifications/progress", note)
	}
	srv.Handle = func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		token := rawjson.MetaValue(params, "progressToken")
		name, _ := rawjson.StringField(params, "name")
		switch name {
		case "work":
			if err := progress(token, "during"); err != nil {
				return nil, err
			}
			return memserver.Text("worked"), nil
		case "hang":
			close(started)
			<-ctx.Done()
			err := progress(token, "after cancel")
			close(cancelled)
			return nil, err
		case "poke":
			var call struct {
				Arguments struct {
					Tokens []json.RawMessage
					Task   json.RawMessage
				}
			}
			_ = json.Unmarshal(params, &call)
			for _, late := range call.Arguments.Tokens {
				if err := progress(late, "late"); err != nil {
					return nil, err
				}
			}
			if task := call.Arguments.Task; task != nil {
				note, _ := json.Marshal(map[string]any{"progressToken": task, "progress": 1, "message": "task",
					"_meta": map[string]any{translate.RelatedTaskKey: map[string]string{"taskId": "task-1"}}})
				if err := srv.Conn().Notify("notifications/progress", note); err != nil {
					return nil, err
				}
			}
			if err := progress(token, "poke"); err != nil {
				return nil, err
			}
			return memserver.Text("poked"), nil
		}
		return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "no %s", method)
	}
	return srv, started, cancelled
}

// progressSeen lists the token and message of each notifications/progress
// h has seen, and forgets what it saw.
func progressSeen(h *memHost) []string {
	var out []string
	for _, m := range h.seen {
		var method string
		if json.Unmarshal(m["method"], &method) != nil || method != "notifications/progress" {
			continue
		}
		var p struct {
			ProgressToken json.RawMessage
			Message       string
		}
		_ = json.Unmarshal(m["params"], &p)
		out = append(out, string(p.ProgressToken)+" "+p.Message)
	}
	h.seen = nil
	return out
}

// The host (one, sharing off) gets a server's progress only while the call
// that carried its token is in flight: what the server sends with the
// token of a call already answered, or cancelled by the host, goes nowhere.
// A task's progress, which goes on under its call's token for the task's
// life, still reaches the host.
func TestProgressOnlyInFlight(t *testing.T) {
	srv, started, cancelled := lateProgressServer()
	_, h := memTrunk(t, memserver.Set{"up": srv}, nil, nil, nil)
	h.initialize(`{}`)
	h.tools()
	h.seen = nil

	if res, errObj := h.call("tools/call", `{"name":"mcp__up__work","arguments":{},"_meta":{"progressToken":"t1"}}`); res == nil {
		t.Fatalf("work: %s", errObj)
	}
	if got, want := progressSeen(h), []string{`"t1" during`}; !slices.Equal(got, want) {
		t.Fatalf("progress during the call: %q, want %q", got, want)
	}

	h.send(`{"jsonrpc":"2.0","id":"h","method":"tools/call","params":{"name":"mcp__up__hang","arguments":{},"_meta":{"progressToken":2}}}`)
	<-started
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"h"}}`)
	<-cancelled

	// The answer to poke comes after every notification queued before it,
	// the late ones included.
	if res, errObj := h.call("tools/call", `{"name":"mcp__up__poke","arguments":{"tokens":["t1",2],"task":"t1"},"_meta":{"progressToken":"t3"}}`); res == nil {
		t.Fatalf("poke: %s", errObj)
	}
	if got, want := progressSeen(h), []string{`"t1" task`, `"t3" poke`}; !slices.Equal(got, want) {
		t.Errorf("progress after the first two calls ended: %q, want only a task's and the third call's %q", got, want)
	}
}
