package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
)

// script answers tasks/get with its statuses in turn (the last one for
// ever), and records every request.
type script struct {
	mu       sync.Mutex
	statuses []string
	calls    []string
}

func (s *script) Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, method+" "+string(params))
	if method != "tasks/get" {
		return json.RawMessage(`{"resultType":"complete"}`), nil
	}
	next := s.statuses[0]
	if len(s.statuses) > 1 {
		s.statuses = s.statuses[1:]
	}
	return json.RawMessage(next), nil
}

func (s *script) methods() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

const createdTask = `{"resultType":"task","taskId":"t1","status":"working","pollIntervalMs":1}`

func TestFollowCompleted(t *testing.T) {
	s := &script{statuses: []string{
		`{"taskId":"t1","status":"working","pollIntervalMs":1}`,
		`{"taskId":"t1","status":"completed","result":{"content":[{"type":"text","text":"done"}]}}`,
	}}
	res, err := follow(context.Background(), context.Background(), s, "srv", json.RawMessage(createdTask))
	if err != nil || string(res) != `{"content":[{"type":"text","text":"done"}]}` {
		t.Fatalf("Follow = %s, %v; want the inlined result", res, err)
	}
	if calls := s.methods(); len(calls) != 2 || calls[0] != `tasks/get {"taskId":"t1"}` {
		t.Errorf("calls %q, want two polls of t1", calls)
	}
}

func TestFollowEnds(t *testing.T) {
	for name, c := range map[string]struct {
		status, says string
		cancels      bool
	}{
		"failed":         {`{"taskId":"t1","status":"failed","error":{"code":-32603,"message":"it broke"}}`, "it broke", false},
		"cancelled":      {`{"taskId":"t1","status":"cancelled"}`, `server "srv" cancelled task t1`, false},
		"input required": {`{"taskId":"t1","status":"input_required","inputRequests":{"k":{"method":"elicitation/create","params":{}}}}`, "asks for input", true},
	} {
		s := &script{statuses: []string{c.status}}
		_, err := follow(context.Background(), context.Background(), s, "srv", json.RawMessage(createdTask))
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v, want an error saying %q", name, err, c.says)
		}
		calls := s.methods()
		if cancelled := strings.HasPrefix(calls[len(calls)-1], "tasks/cancel"); cancelled != c.cancels {
			t.Errorf("%s: calls %q: cancelled %v, want %v", name, calls, cancelled, c.cancels)
		}
	}
	var rpcErr *jsonrpc.Error
	s := &script{statuses: []string{`{"taskId":"t1","status":"failed","error":{"code":-32000,"message":"boom"}}`}}
	if _, err := follow(context.Background(), context.Background(), s, "srv", json.RawMessage(createdTask)); !errors.As(err, &rpcErr) || rpcErr.Code != -32000 {
		t.Errorf("a failed task's error: %v, want the server's -32000", err)
	}
	if _, err := follow(context.Background(), context.Background(), s, "srv", json.RawMessage(`{"resultType":"task","status":"working"}`)); err == nil || !strings.Contains(err.Error(), `"srv"`) {
		t.Errorf("a task without an id: %v, want an error naming the server", err)
	}
}

// When the host gives up, the task is cancelled at the server.
func TestFollowCancelled(t *testing.T) {
	s := &script{statuses: []string{`{"taskId":"t1","status":"working","pollIntervalMs":1}`}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := follow(ctx, context.Background(), s, "srv", json.RawMessage(createdTask)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Follow = %v, want the host's cancellation", err)
	}
	if calls := s.methods(); len(calls) == 0 || calls[len(calls)-1] != `tasks/cancel {"taskId":"t1"}` {
		t.Errorf("calls %q, want the task cancelled", calls)
	}
}
