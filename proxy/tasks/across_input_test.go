package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/proxy/translate"
)

// askingServer2025 is a 2025-11-25 server's connection whose task s1 is
// input_required until its elicitation, sent while the client waits on
// tasks/result (as the trunk routes a server's request: Parking.Current),
// is answered; then completed. elicited gets what the elicitation got.
type askingServer2025 struct {
	parking  *translate.Parking
	elicited chan string

	mu       sync.Mutex
	answered bool
	calls    []string
}

func (s *askingServer2025) Call(ctx context.Context, method string, _ json.RawMessage) (json.RawMessage, error) {
	s.mu.Lock()
	s.calls = append(s.calls, method)
	answered := s.answered
	s.mu.Unlock()
	switch method {
	case "tasks/get":
		if answered {
			return json.RawMessage(`{"taskId":"s1","status":"completed","pollInterval":5000}`), nil
		}
		return json.RawMessage(`{"taskId":"s1","status":"input_required","pollInterval":5000}`), nil
	case "tasks/cancel":
		return json.RawMessage(`{"taskId":"s1","status":"cancelled"}`), nil
	case "tasks/result":
		if !answered {
			params := json.RawMessage(`{"message":"which?","_meta":{"` + translate.RelatedTaskKey + `":{"taskId":"s1"}}}`)
			ex := s.parking.Current("srv", params)
			if ex == nil {
				return nil, errors.New("the server's request found no exchange")
			}
			res, err := ex.Ask(ctx, "elicitation/create", params)
			if err != nil {
				s.elicited <- "error: " + err.Error()
				return nil, err
			}
			s.mu.Lock()
			s.answered = true
			s.mu.Unlock()
			s.elicited <- string(res)
		}
		return json.RawMessage(`{"content":[{"type":"text","text":"done"}],"_meta":{"` + translate.RelatedTaskKey + `":{"taskId":"s1"}}}`), nil
	}
	return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "no %s", method)
}

// acrossInputRoute is the Route of a 2026-07-28 host that can elicit to
// an askingServer2025, on a parking whose calls wg counts.
func acrossInputRoute(t *testing.T) (*Route, *askingServer2025, *sync.WaitGroup) {
	var wg sync.WaitGroup
	life, stop := context.WithCancel(context.Background())
	p := translate.NewParking(life, func(f func()) bool { wg.Go(f); return true }, nil)
	t.Cleanup(func() { p.CloseAll(); stop(); wg.Wait() })
	s := &askingServer2025{parking: p, elicited: make(chan string, 2)}
	host := translate.HostRequest{Version: protocol.Stateless, Caps: map[string]json.RawMessage{"elicitation": json.RawMessage(`{}`)}}
	return &Route{Follower: Follower{Conn: s, Server: "srv"}, ServerCaps: json.RawMessage(`{"tasks":{}}`), Issue: hostID,
		Export: func(r json.RawMessage) json.RawMessage { return r }, Parking: p, Host: host}, s, &wg
}

// A 2026-07-28 host's tasks/get of a 2025-11-25 task at input_required
// opens the trunk's tasks/result, whose elicitation it lists as input-1;
// tasks/update with another key is -32602 naming the task and the key,
// with input-1 is the ack and the server's answer; the completed task's
// tasks/get inlines the result, and a tasks/update then is refused.
func TestRouteExtensionHostInput(t *testing.T) {
	r, s, wg := acrossInputRoute(t)
	ctx := context.Background()
	get := json.RawMessage(`{"taskId":"s1"}`)
	res, err := r.Answer(ctx, ctx, "tasks/get", get, true)
	var task struct {
		Status        string
		InputRequests map[string]translate.InputRequest
	}
	if err != nil || json.Unmarshal(res, &task) != nil || task.Status != "input_required" || task.InputRequests["input-1"].Method != "elicitation/create" || len(task.InputRequests) != 1 {
		t.Fatalf("tasks/get: %s %v; want the elicitation as input-1", res, err)
	}
	if strings.Contains(string(task.InputRequests["input-1"].Params), translate.RelatedTaskKey) {
		t.Errorf("the input request %s keeps the server's related task", task.InputRequests["input-1"].Params)
	}

	_, err = r.Answer(ctx, ctx, "tasks/update", json.RawMessage(`{"taskId":"s1","inputResponses":{"input-2":{"action":"accept"}}}`), true)
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams || !strings.Contains(rpcErr.Message, "host-s1") || !strings.Contains(rpcErr.Message, "input-2") {
		t.Errorf("tasks/update of an unknown key: %v; want -32602 naming the task and the key", err)
	}
	res, err = r.Answer(ctx, ctx, "tasks/update", json.RawMessage(`{"taskId":"s1","inputResponses":{"input-1":{"action":"accept"}}}`), true)
	if err != nil || string(res) != `{"resultType":"complete"}` {
		t.Fatalf("tasks/update: %s %v; want the ack", res, err)
	}
	if got := <-s.elicited; got != `{"action":"accept"}` {
		t.Errorf("the server's elicitation got %s", got)
	}

	res, err = r.Answer(ctx, ctx, "tasks/get", get, true)
	if err != nil || !strings.Contains(string(res), `"status":"completed"`) || !strings.Contains(string(res), `"result":{"content":[{"type":"text","text":"done"}]}`) {
		t.Errorf("tasks/get of the completed task: %s %v; want its result inlined, without the related task", res, err)
	}
	wg.Wait() // the trunk's tasks/result has returned
	if _, err := r.Answer(ctx, ctx, "tasks/update", json.RawMessage(`{"taskId":"s1","inputResponses":{"input-1":{}}}`), true); !errors.As(err, &rpcErr) || !strings.Contains(rpcErr.Message, "holds no input request") {
		t.Errorf("tasks/update after the end: %v; want it refused saying the trunk holds no input of the task", err)
	}
}

// The host's tasks/cancel while the server waits for its input cancels
// the task at the server and ends the trunk's tasks/result: the server's
// elicitation gets an error, and nothing keeps running.
func TestRouteExtensionHostInputCancelled(t *testing.T) {
	r, s, wg := acrossInputRoute(t)
	ctx := context.Background()
	if res, err := r.Answer(ctx, ctx, "tasks/get", json.RawMessage(`{"taskId":"s1"}`), true); err != nil || !strings.Contains(string(res), `"input-1"`) {
		t.Fatalf("tasks/get: %s %v; want the elicitation listed", res, err)
	}
	if res, err := r.Answer(ctx, ctx, "tasks/cancel", json.RawMessage(`{"taskId":"s1"}`), true); err != nil || string(res) != `{"resultType":"complete"}` {
		t.Fatalf("tasks/cancel: %s %v", res, err)
	}
	if got := <-s.elicited; !strings.Contains(got, "the host cancelled the task") {
		t.Errorf("the server's elicitation got %s, want the error saying the host cancelled", got)
	}
	wg.Wait()
	if n := r.Parking.Count(); n != 0 {
		t.Errorf("%d exchanges open after the cancel", n)
	}
	if !strings.Contains(strings.Join(s.calls, " "), "tasks/cancel") {
		t.Errorf("the server got %q, want tasks/cancel", s.calls)
	}
}
