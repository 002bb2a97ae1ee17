package proxy

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
	"github.com/mcptrunk/mcptrunk/proxy/tasks"
	"github.com/mcptrunk/mcptrunk/proxy/translate"
)

// clarifyingTaskServer is a 2025-11-25 server whose tool research takes a
// task (up-9) that is input_required until the client answers the
// elicitation the server sends, naming the task, while the client waits on
// tasks/result; then it completes with the answer's action in its text.
// elicited gets the answer (or error) the server's elicitation got; got
// counts the requests by method.
func clarifyingTaskServer() (srv *memserver.Server, elicited <-chan string, got func(string) int) {
	var (
		mu     sync.Mutex
		answer string
		calls  = map[string]int{}
	)
	answers := make(chan string, 4)
	task := func() string {
		status := "input_required"
		if answer != "" {
			status = "completed"
		}
		return `{"taskId":"up-9","status":"` + status + `","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttl":null,"pollInterval":5000}`
	}
	srv = &memserver.Server{
		Capabilities: json.RawMessage(`{"tools":{},"tasks":{"cancel":{},"requests":{"tools":{"call":{}}}}}`),
		Tools:        []json.RawMessage{json.RawMessage(`{"name":"research","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}}`)},
	}
	srv.Handle = func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		mu.Lock()
		calls[method]++
		pending := answer == ""
		mu.Unlock()
		switch method {
		case "tools/call":
			return json.RawMessage(`{"task":{"taskId":"up-9","status":"working","ttl":null,"pollInterval":5000}}`), nil
		case "tasks/get", "tasks/cancel":
			mu.Lock()
			defer mu.Unlock()
			return json.RawMessage(task()), nil
		case "tasks/result":
			if pending {
				res, err := srv.Conn().Call(ctx, "elicitation/create", json.RawMessage(`{"message":"which one?","requestedSchema":{"type":"object"},"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"up-9"}}}`))
				if err != nil {
					answers <- "error: " + err.Error()
					return nil, err
				}
				action, _ := rawjson.StringField(res, "action")
				mu.Lock()
				answer = action
				mu.Unlock()
				answers <- string(res) // completed from now
			}
			mu.Lock()
			defer mu.Unlock()
			return json.RawMessage(`{"content":[{"type":"text","text":"the host said ` + answer + `"}],"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"up-9"}}}`), nil
		}
		return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "no %s", method)
	}
	return srv, answers, func(method string) int {
		mu.Lock()
		defer mu.Unlock()
		return calls[method]
	}
}

// acrossInputHost is a 2026-07-28 host with the tasks extension and
// elicitation that has created research's task through the trunk: its
// _meta, and the task's id as the host knows it.
func acrossInputHost(t *testing.T, h *memHost) (meta, id string) {
	t.Helper()
	meta = statelessMeta(`{"elicitation":{},"extensions":{"` + tasks.Extension + `":{}}}`)
	res, errObj := h.call("tools/call", `{"name":"mcp__v1__research","arguments":{},`+meta+`}`)
	id, _ = rawjson.StringField(res, "taskId")
	if !tasks.IsCreated(res) || id == "" || id == "up-9" {
		t.Fatalf("tools/call: %s %s; want the extension's CreateTaskResult under an id of the trunk's", res, errObj)
	}
	return meta, id
}

// inputRequests polls tasks/get of id until it lists input requests (each
// poll waits for them up to the task's poll interval), and returns them.
func inputRequests(t *testing.T, h *memHost, meta, id string) map[string]translate.InputRequest {
	t.Helper()
	for range 10 {
		res, errObj := h.call("tasks/get", `{"taskId":"`+id+`",`+meta+`}`)
		var got struct {
			Status        string
			InputRequests map[string]translate.InputRequest
		}
		if err := json.Unmarshal(res, &got); err != nil || got.Status != "input_required" {
			t.Fatalf("tasks/get: %s %s; want the task at input_required", res, errObj)
		}
		if len(got.InputRequests) > 0 {
			return got.InputRequests
		}
	}
	t.Fatalf("tasks/get never listed the server's input request")
	return nil
}

// A 2026-07-28 host's task on a 2025-11-25 server that asks for input
// while its client waits on tasks/result: the host's tasks/get at
// input_required has the trunk send tasks/result, and lists the server's
// elicitation (the server's related-task _meta left out) as the task's
// inputRequests, under the same key at each poll; tasks/update with an
// unknown key is refused naming the task, with the key answers the
// server's request and is acknowledged; the completed task's tasks/get
// inlines the result; no exchange stays open.
func TestTasksAcrossInputExtensionHost(t *testing.T) {
	srv, elicited, got := clarifyingTaskServer()
	tr, h := memTrunk(t, memserver.Set{"v1": srv}, nil, nil, nil)
	meta, id := acrossInputHost(t, h)

	asked := inputRequests(t, h, meta, id)
	var key string
	for k, req := range asked {
		key = k
		if len(asked) != 1 || req.Method != "elicitation/create" || !strings.Contains(string(req.Params), `"which one?"`) || strings.Contains(string(req.Params), "related-task") {
			t.Fatalf("inputRequests: %v; want the server's one elicitation, without its related task", asked)
		}
	}
	if again := inputRequests(t, h, meta, id); again[key].Method != "elicitation/create" || len(again) != 1 {
		t.Errorf("the next tasks/get listed %v; want the same request under %q", again, key)
	}

	_, errObj := h.call("tasks/update", `{"taskId":"`+id+`","inputResponses":{"nosuch":{"action":"accept"}},`+meta+`}`)
	if !strings.Contains(string(errObj), `-32602`) || !strings.Contains(string(errObj), id) || !strings.Contains(string(errObj), "nosuch") {
		t.Errorf("tasks/update with an unknown key: %s; want -32602 naming the task and the key", errObj)
	}
	res, errObj := h.call("tasks/update", `{"taskId":"`+id+`","inputResponses":{"`+key+`":{"action":"accept","content":{}}},`+meta+`}`)
	if string(res) != `{"resultType":"complete"}` {
		t.Fatalf("tasks/update: %s %s; want the empty ack", res, errObj)
	}
	if answer := <-elicited; !strings.Contains(answer, `"accept"`) {
		t.Errorf("the server's elicitation got %s, want the host's answer", answer)
	}

	res, errObj = h.call("tasks/get", `{"taskId":"`+id+`",`+meta+`}`)
	if !strings.Contains(string(res), `"status":"completed"`) || !strings.Contains(string(res), "the host said accept") || strings.Contains(string(res), "up-9") {
		t.Errorf("tasks/get of the completed task: %s %s; want the result inlined, without the server's id", res, errObj)
	}
	if n := got("tasks/result"); n < 1 {
		t.Errorf("the server got %d tasks/result", n)
	}
	waitParked(t, tr, 0)
	if _, errObj := h.call("tasks/update", `{"taskId":"`+id+`","inputResponses":{"`+key+`":{"action":"accept"}},`+meta+`}`); !strings.Contains(string(errObj), `-32602`) || !strings.Contains(string(errObj), id) {
		t.Errorf("tasks/update of a task whose input the trunk no longer holds: %s; want -32602 naming the task", errObj)
	}
}

// The host cancels its task while the server waits for its input: the
// task is cancelled at the server, the trunk's tasks/result ends (its
// pending elicitation ends with an error: the answer saying the host
// cancelled, or the request's own cancellation, whichever the server reads
// first), and no exchange or goroutine stays, also of a task still
// waiting for input when the trunk shuts down.
func TestTasksAcrossInputCancelled(t *testing.T) {
	srv, elicited, got := clarifyingTaskServer()
	defer verifyNoLeaks(t, goleak.IgnoreCurrent(), srv)
	tr, h := memTrunk(t, memserver.Set{"v1": srv}, nil, nil, nil)
	meta, id := acrossInputHost(t, h)
	inputRequests(t, h, meta, id)
	if res, errObj := h.call("tasks/cancel", `{"taskId":"`+id+`",`+meta+`}`); string(res) != `{"resultType":"complete"}` {
		t.Fatalf("tasks/cancel: %s %s; want the empty ack", res, errObj)
	}
	if answer := <-elicited; !strings.HasPrefix(answer, "error: ") {
		t.Errorf("the server's elicitation got %s, want an error (the host's cancel, or its tasks/result's)", answer)
	}
	if n := got("tasks/cancel"); n != 1 {
		t.Errorf("the server got %d tasks/cancel, want 1", n)
	}
	waitParked(t, tr, 0)

	// Another task waiting for input when the trunk shuts down: its
	// tasks/result ends with the trunk.
	_, id = acrossInputHost(t, h)
	inputRequests(t, h, meta, id)
	_ = h.in.Close()
	if err := <-h.served; err != nil {
		t.Logf("Serve: %v", err)
	}
	if answer := <-elicited; !strings.HasPrefix(answer, "error: ") {
		t.Errorf("the second task's elicitation got %s, want an error (the trunk shut down)", answer)
	}
	if n := tr.parked.Count(); n != 0 {
		t.Errorf("%d exchanges open after shutdown", n)
	}
}
