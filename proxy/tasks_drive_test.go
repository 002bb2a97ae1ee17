package proxy

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
)

// requiredTaskServer has one tool, research, that runs only as a task.
// tasks/result answers once finish is closed (or the request ends); each
// tasks/cancel is sent on cancelled.
func requiredTaskServer(finish <-chan struct{}, cancelled chan<- string) *memserver.Server {
	return &memserver.Server{
		Capabilities: json.RawMessage(`{"tools":{},"tasks":{"cancel":{},"requests":{"tools":{"call":{}}}}}`),
		Tools:        []json.RawMessage{json.RawMessage(`{"name":"research","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}}`)},
		Handle: func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
			switch method {
			case "tools/call":
				if !rawjson.HasField(params, "task") {
					return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "research runs only as a task")
				}
				return json.RawMessage(`{"task":{"taskId":"up-7","status":"working","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttl":null}}`), nil
			case "tasks/result":
				select {
				case <-finish:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				return json.RawMessage(`{"content":[{"type":"text","text":"report"}],"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"up-7"}}}`), nil
			case "tasks/cancel":
				id, _ := rawjson.StringField(params, "taskId")
				cancelled <- id
				return json.RawMessage(`{"taskId":"up-7","status":"cancelled","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttl":null}`), nil
			}
			return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "no %s", method)
		},
	}
}

// A host that does not speak tasks calls a task-only tool: the trunk runs
// the task and answers with its result.
func TestTasksDrivenForHost(t *testing.T) {
	finish := make(chan struct{})
	close(finish)
	_, h := memTrunk(t, memserver.Set{"slow": requiredTaskServer(finish, make(chan string, 1))}, nil, nil, nil)
	h.initialize(`{}`)
	h.tools()
	res, errObj := h.call("tools/call", `{"name":"mcp__slow__research","arguments":{}}`)
	if string(res) != `{"content":[{"type":"text","text":"report"}]}` {
		t.Fatalf("the result: %s %s, want the task's, without its related task", res, errObj)
	}
}

// The host cancels the call while the trunk runs its task: the task is
// cancelled at the server.
func TestTasksDrivenCancelled(t *testing.T) {
	cancelled := make(chan string, 1)
	s := requiredTaskServer(make(chan struct{}), cancelled)
	waiting := make(chan struct{})
	handle := s.Handle
	s.Handle = func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		if method == "tasks/result" {
			close(waiting)
		}
		return handle(ctx, method, params)
	}
	_, h := memTrunk(t, memserver.Set{"slow": s}, nil, nil, nil)
	h.initialize(`{}`)
	h.tools()
	h.send(`{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"mcp__slow__research","arguments":{}}}`)
	select {
	case <-waiting:
	case <-time.After(30 * time.Second):
		t.Fatal("the trunk never waited for the task's result")
	}
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c1"}}`)
	select {
	case id := <-cancelled:
		if id != "up-7" {
			t.Errorf("tasks/cancel for %q, want the server's id up-7", id)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the task was not cancelled at the server")
	}
	if strings.Contains(strings.Join(s.Received(), ","), "tasks/get") {
		t.Errorf("the trunk polled: %q", s.Received())
	}
}
