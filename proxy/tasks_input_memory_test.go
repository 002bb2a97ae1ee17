package proxy

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
	"github.com/mcptrunk/mcptrunk/proxy/tasks"
)

// askingTaskServer is a 2026-07-28 server with the tasks extension and one
// task-only tool, ask, whose task waits for an elicitation (input request
// k1) and then completes with the answer's action in its text. got
// records each tasks request's params by method.
func askingTaskServer() (*memserver.Server, func(method string) []string) {
	var (
		mu     sync.Mutex
		got    = map[string][]string{}
		answer string
	)
	srv := &memserver.Server{
		Revision:     protocol.Stateless,
		Capabilities: json.RawMessage(`{"tools":{},"extensions":{"` + tasks.Extension + `":{}}}`),
		Tools:        []json.RawMessage{json.RawMessage(`{"name":"ask","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}}`)},
	}
	srv.Handle = func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		mu.Lock()
		defer mu.Unlock()
		got[method] = append(got[method], string(params))
		switch method {
		case "tools/call":
			if !tasks.DeclaresExtension(rawjson.MetaValue(params, protocol.MetaClientCapabilities)) {
				return nil, jsonrpc.Errorf(-32021, "ask runs only as a task")
			}
			answer = ""
			return json.RawMessage(`{"resultType":"task","taskId":"srv-5","status":"working","pollIntervalMs":1}`), nil
		case "tasks/get":
			if answer == "" {
				return json.RawMessage(`{"resultType":"complete","taskId":"srv-5","status":"input_required","pollIntervalMs":1,"inputRequests":{"k1":{"method":"elicitation/create","params":{"message":"sure?","requestedSchema":{"type":"object"}}}}}`), nil
			}
			return json.RawMessage(`{"resultType":"complete","taskId":"srv-5","status":"completed","result":{"content":[{"type":"text","text":"the host said ` + answer + `"}]}}`), nil
		case "tasks/update":
			var u struct {
				InputResponses map[string]struct{ Action string } `json:"inputResponses"`
			}
			_ = json.Unmarshal(params, &u)
			answer = u.InputResponses["k1"].Action
			return json.RawMessage(`{"resultType":"complete"}`), nil
		case "tasks/cancel":
			return json.RawMessage(`{"resultType":"complete"}`), nil
		}
		return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "no %s", method)
	}
	return srv, func(method string) []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got[method]...)
	}
}

// A 2025-11-25 host that can elicit calls a 2026-07-28 server's task-only
// tool whose task asks for input: the host gets a real elicitation/create,
// its answer reaches the server in tasks/update under the server's key,
// and the host's call gets the task's result.
func TestTasksFollowedInputHost2025(t *testing.T) {
	srv, got := askingTaskServer()
	_, h := memTrunk(t, memserver.Set{"v2": srv}, map[string]map[string]any{"v2": {"protocolVersion": "2026-07-28"}}, nil, nil)
	h.answer = func(method string, params json.RawMessage) string {
		if method == "elicitation/create" && strings.Contains(string(params), `"sure?"`) {
			return `{"action":"accept","content":{}}`
		}
		return `{"action":"decline"}`
	}
	h.initialize(`{"elicitation":{}}`)
	res, errObj := h.call("tools/call", `{"name":"mcp__v2__ask","arguments":{}}`)
	if !strings.Contains(string(res), "the host said accept") {
		t.Fatalf("tools/call: %s %s; want the task's result after the host's answer", res, errObj)
	}
	if !slices.Contains(h.seenMethods(), "elicitation/create") {
		t.Errorf("the host was sent %q, want the elicitation", h.seenMethods())
	}
	if u := got("tasks/update"); len(u) != 1 || !strings.Contains(u[0], `"taskId":"srv-5"`) || !strings.Contains(u[0], `"inputResponses":{"k1":{"action":"accept"`) {
		t.Errorf("tasks/update: %q, want the host's answer under k1 for srv-5", u)
	}
	if c := got("tasks/cancel"); len(c) != 0 {
		t.Errorf("the task was cancelled: %q", c)
	}
}

// A 2025-11-25 host that did not declare elicitation: the task is
// cancelled at the server and the call fails naming the tool, the server
// and the capability; the host is asked nothing.
func TestTasksFollowedInputRefused(t *testing.T) {
	srv, got := askingTaskServer()
	_, h := memTrunk(t, memserver.Set{"v2": srv}, map[string]map[string]any{"v2": {"protocolVersion": "2026-07-28"}}, nil, nil)
	h.initialize(`{}`)
	_, errObj := h.call("tools/call", `{"name":"mcp__v2__ask","arguments":{}}`)
	for _, want := range []string{`tool \"ask\" on server \"v2\"`, "elicitation capability", "cancelled"} {
		if !strings.Contains(string(errObj), want) {
			t.Errorf("the error: %s, want it to say %s", errObj, want)
		}
	}
	if slices.Contains(h.seenMethods(), "elicitation/create") {
		t.Errorf("the host was asked: %q", h.seenMethods())
	}
	if c := got("tasks/cancel"); len(c) != 1 || !strings.Contains(c[0], `"srv-5"`) {
		t.Errorf("tasks/cancel: %q, want srv-5 cancelled", c)
	}
}

// A 2025-11-25 task the trunk drives for a host that asked for none: the
// server's elicitation during tasks/result, on its connection, reaches
// the host and the host's answer returns to the server.
func TestTasksDrivenInput(t *testing.T) {
	finish := make(chan struct{})
	s := requiredTaskServer(finish, make(chan string, 1))
	handle := s.Handle
	var answered string
	s.Handle = func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		if method == "tasks/result" {
			res, err := s.Conn().Call(ctx, "elicitation/create", json.RawMessage(`{"message":"go on?","requestedSchema":{"type":"object"},"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"up-7"}}}`))
			if err != nil {
				return nil, err
			}
			answered = string(res)
			close(finish)
		}
		return handle(ctx, method, params)
	}
	_, h := memTrunk(t, memserver.Set{"slow": s}, nil, nil, nil)
	h.answer = func(method string, params json.RawMessage) string { return `{"action":"accept","content":{}}` }
	h.initialize(`{"elicitation":{}}`)
	h.tools()
	res, errObj := h.call("tools/call", `{"name":"mcp__slow__research","arguments":{}}`)
	if !strings.Contains(string(res), "report") {
		t.Fatalf("the result: %s %s, want the task's", res, errObj)
	}
	if !slices.Contains(h.seenMethods(), "elicitation/create") || !strings.Contains(answered, `"accept"`) {
		t.Errorf("the host was sent %q and the server got %s, want the elicitation and its answer", h.seenMethods(), answered)
	}
	// The request's related task is named as the host would know it: by an
	// id of the trunk's, never the server's own.
	for _, m := range h.seen {
		if string(m["method"]) == `"elicitation/create"` && (strings.Contains(string(m["params"]), `"up-7"`) || !strings.Contains(string(m["params"]), `"taskId":"mcptrunk-task`)) {
			t.Errorf("the elicitation names its task %s, want the trunk's id", m["params"])
		}
	}
}

// The same for a 2026-07-28 host (it cannot be asked outside a result):
// the driven task runs as an exchange, so the server's elicitation during
// it comes back as input_required on the host's tools/call, and the
// retry's answer returns to the server and gets the task's result.
func TestTasksDrivenInputStatelessHost(t *testing.T) {
	finish := make(chan struct{})
	s := requiredTaskServer(finish, make(chan string, 1))
	handle := s.Handle
	answered := make(chan string, 1)
	s.Handle = func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		if method == "tasks/result" {
			res, err := s.Conn().Call(ctx, "elicitation/create", json.RawMessage(`{"message":"go on?","requestedSchema":{"type":"object"}}`))
			if err != nil {
				return nil, err
			}
			answered <- string(res)
			close(finish)
		}
		return handle(ctx, method, params)
	}
	_, h := memTrunk(t, memserver.Set{"slow": s}, nil, nil, nil)
	meta := statelessMeta(`{"elicitation":{}}`)
	res, errObj := h.call("tools/call", `{"name":"mcp__slow__research","arguments":{},`+meta+`}`)
	var ir struct {
		ResultType    string
		InputRequests map[string]struct{ Method string }
		RequestState  string
	}
	if err := json.Unmarshal(res, &ir); err != nil || ir.ResultType != "input_required" || len(ir.InputRequests) != 1 {
		t.Fatalf("tools/call: %s %s; want input_required with the server's elicitation", res, errObj)
	}
	var key string
	for k, r := range ir.InputRequests {
		if key = k; r.Method != "elicitation/create" {
			t.Errorf("input request %s: %s, want elicitation/create", k, r.Method)
		}
	}
	state, _ := json.Marshal(ir.RequestState)
	res, errObj = h.call("tools/call", `{"name":"mcp__slow__research","arguments":{},"inputResponses":{"`+key+`":{"action":"accept","content":{}}},"requestState":`+string(state)+`,`+meta+`}`)
	if !strings.Contains(string(res), "report") {
		t.Fatalf("the retry: %s %s; want the task's result", res, errObj)
	}
	if got := <-answered; !strings.Contains(got, `"accept"`) {
		t.Errorf("the server got %s, want the host's answer", got)
	}
}
