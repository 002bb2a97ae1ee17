package proxy

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
	"github.com/mcptrunk/mcptrunk/proxy/tasks"
)

// taskServerV2 is a 2026-07-28 server with the tasks extension (SEP-2663):
// slow creates a task for a client that declared the extension on the call
// and runs at once for any other; tasks/get reports the task (its result
// inlined, with a resource link, once an update has answered its input
// request), tasks/update and tasks/cancel answer the empty ack. got records
// each tasks request's params.
func taskServerV2() (*memserver.Server, func(method string) []string) {
	var (
		mu      sync.Mutex
		got     = map[string][]string{}
		updated bool
	)
	srv := &memserver.Server{
		Revision:     protocol.Stateless,
		Capabilities: json.RawMessage(`{"tools":{},"extensions":{"` + tasks.Extension + `":{}}}`),
		Tools:        []json.RawMessage{json.RawMessage(`{"name":"slow","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}}`)},
	}
	srv.Handle = func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		mu.Lock()
		defer mu.Unlock()
		got[method] = append(got[method], string(params))
		const created = `"createdAt":"2026-12-04T00:00:00Z","lastUpdatedAt":"2026-12-04T00:00:00Z","ttlMs":60000`
		switch method {
		case "tools/call":
			caps := rawjson.MetaValue(params, protocol.MetaClientCapabilities)
			if !tasks.DeclaresExtension(caps) {
				return json.RawMessage(`{"content":[{"type":"text","text":"ran at once"}]}`), nil
			}
			return json.RawMessage(`{"resultType":"task","taskId":"srv-1","status":"working",` + created + `,"pollIntervalMs":100}`), nil
		case "tasks/get":
			if id, _ := rawjson.StringField(params, "taskId"); id != "srv-1" {
				return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "unknown task %q", id)
			}
			if !updated {
				return json.RawMessage(`{"resultType":"complete","taskId":"srv-1","status":"input_required",` + created + `,"inputRequests":{"k1":{"method":"elicitation/create","params":{"message":"sure?"}}}}`), nil
			}
			return json.RawMessage(`{"resultType":"complete","taskId":"srv-1","status":"completed",` + created + `,"result":{"content":[{"type":"resource_link","uri":"file:///out.txt","name":"out"}]}}`), nil
		case "tasks/update":
			updated = true
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

// statelessMeta is the _meta of a 2026-07-28 request from a host whose
// capabilities are caps.
func statelessMeta(caps string) string {
	return `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}`
}

// A 2026-07-28 host and server, both with the tasks extension: the trunk
// declares it, the task the server creates reaches the host under an id of
// the trunk's that names the server, and tasks/get, tasks/update and
// tasks/cancel with that id reach the server with its own id, each answer
// with the host's id in it and an inlined result's URIs exported; an id the
// trunk did not issue is refused; a host without the extension gets the
// result at once, as the server decides.
func TestTasksExtensionRouting(t *testing.T) {
	srv, got := taskServerV2()
	_, h := memTrunk(t, memserver.Set{"v2": srv}, map[string]map[string]any{"v2": {"protocolVersion": "2026-07-28"}}, nil, nil)
	withTasks := statelessMeta(`{"extensions":{"` + tasks.Extension + `":{}}}`)

	disc, errObj := h.call("server/discover", `{`+withTasks+`}`)
	if !strings.Contains(string(disc), `"`+tasks.Extension+`"`) {
		t.Fatalf("server/discover: %s %s; want the tasks extension declared", disc, errObj)
	}
	res, errObj := h.call("tools/call", `{"name":"mcp__v2__slow","arguments":{},`+withTasks+`}`)
	id, _ := rawjson.StringField(res, "taskId")
	if !tasks.IsCreated(res) || id == "" || id == "srv-1" || !strings.Contains(string(res), `"pollIntervalMs":100`) {
		t.Fatalf("tools/call: %s %s; want the server's CreateTaskResult under an id of the trunk's", res, errObj)
	}
	if calls := got("tools/call"); len(calls) != 1 || !tasks.DeclaresExtension(rawjson.MetaValue(json.RawMessage(calls[0]), protocol.MetaClientCapabilities)) {
		t.Errorf("the server's tools/call: %q, want the host's extension declared on it", calls)
	}

	for _, step := range []struct{ method, params, want string }{
		{"tasks/get", `{"taskId":"` + id + `",` + withTasks + `}`, `"status":"input_required"`},
		{"tasks/update", `{"taskId":"` + id + `","inputResponses":{"k1":{"action":"accept"}},` + withTasks + `}`, `{"resultType":"complete"}`},
		{"tasks/get", `{"taskId":"` + id + `",` + withTasks + `}`, `"uri":"mcptrunk://v2/file:///out.txt"`},
		{"tasks/cancel", `{"taskId":"` + id + `",` + withTasks + `}`, `{"resultType":"complete"}`},
	} {
		res, errObj := h.call(step.method, step.params)
		if !strings.Contains(string(res), step.want) {
			t.Errorf("%s: %s %s; want %s", step.method, res, errObj, step.want)
		}
		if taskID, _ := rawjson.StringField(res, "taskId"); taskID != "" && taskID != id {
			t.Errorf("%s answered with task id %q, want the host's %q", step.method, taskID, id)
		}
		sent := got(step.method)
		if len(sent) == 0 || !strings.Contains(sent[len(sent)-1], `"taskId":"srv-1"`) {
			t.Errorf("%s reached the server as %q, want the server's own id", step.method, sent)
		}
	}
	if sent := got("tasks/update"); len(sent) != 1 || !strings.Contains(sent[0], `"inputResponses":{"k1":{"action":"accept"}}`) {
		t.Errorf("tasks/update reached the server as %q, want the host's input responses as sent", sent)
	}

	last := id[len(id)-1:]
	forged := id[:len(id)-1] + map[bool]string{true: "B", false: "A"}[last == "A"] // its MAC changed
	if _, errObj := h.call("tasks/get", `{"taskId":"srv-1",`+withTasks+`}`); !strings.Contains(string(errObj), "not one mcptrunk issued") {
		t.Errorf("the server's own id: %s, want it refused", errObj)
	}
	if _, errObj := h.call("tasks/get", `{"taskId":"`+forged+`",`+withTasks+`}`); errObj == nil {
		t.Errorf("a changed id %q was accepted", forged)
	}

	res, _ = h.call("tools/call", `{"name":"mcp__v2__slow","arguments":{},`+statelessMeta(`{}`)+`}`)
	if tasks.IsCreated(res) || !strings.Contains(string(res), "ran at once") {
		t.Errorf("tools/call from a host without the extension: %s, want the result at once", res)
	}
}

// A stateless request's task id is bound to its caller's subject (the
// access token's, under trunk.http.auth): a later request of the same
// subject, in a session of its own, follows the task; another subject's is
// refused as if the id were forged.
func TestTasksExtensionSubjectBound(t *testing.T) {
	srv, _ := taskServerV2()
	tr, _ := memTrunk(t, memserver.Set{"v2": srv}, map[string]map[string]any{"v2": {"protocolVersion": "2026-07-28"}}, nil, nil)
	request := func(subject string) *memHost {
		return &memHost{pipeHost: runPipes(t, func(ctx context.Context, in io.Reader, out io.Writer) error {
			return tr.Attach(jsonrpc.NewLineReader(in), jsonrpc.NewLineWriter(out), &SessionOptions{PerRequest: true, Subject: subject}).Run(ctx)
		})}
	}
	withTasks := statelessMeta(`{"extensions":{"` + tasks.Extension + `":{}}}`)
	res, errObj := request("alice").call("tools/call", `{"name":"mcp__v2__slow","arguments":{},`+withTasks+`}`)
	id, _ := rawjson.StringField(res, "taskId")
	if id == "" {
		t.Fatalf("tools/call: %s %s", res, errObj)
	}
	if res, errObj := request("alice").call("tasks/get", `{"taskId":"`+id+`",`+withTasks+`}`); !strings.Contains(string(res), `"status"`) {
		t.Errorf("alice's next request: %s %s, want her task", res, errObj)
	}
	if _, errObj := request("bob").call("tasks/get", `{"taskId":"`+id+`",`+withTasks+`}`); !strings.Contains(string(errObj), "not one mcptrunk issued") {
		t.Errorf("bob's request for alice's task: %s, want it refused", errObj)
	}
}

// A 2026-07-28 server's task-only tool, called by a 2025-era host (which
// cannot declare the extension): the trunk declares it on the call, follows
// the task with tasks/get and answers with the result the finished task
// inlines, its URIs exported. A 2026-07-28 host that does not declare it
// gets the server's own -32021, which tells it to.
func TestTasksExtensionDrivenForHost(t *testing.T) {
	var (
		mu    sync.Mutex
		polls int
		calls []string
	)
	srv := &memserver.Server{
		Revision:     protocol.Stateless,
		Capabilities: json.RawMessage(`{"tools":{},"extensions":{"` + tasks.Extension + `":{}}}`),
		Tools:        []json.RawMessage{json.RawMessage(`{"name":"must","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}}`)},
	}
	srv.Handle = func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, method)
		switch method {
		case "tools/call":
			if !tasks.DeclaresExtension(rawjson.MetaValue(params, protocol.MetaClientCapabilities)) {
				return nil, jsonrpc.Errorf(-32021, "this tool needs the tasks extension")
			}
			polls = 0
			return json.RawMessage(`{"resultType":"task","taskId":"srv-9","status":"working","pollIntervalMs":1}`), nil
		case "tasks/get":
			if polls++; polls < 2 {
				return json.RawMessage(`{"resultType":"complete","taskId":"srv-9","status":"working","pollIntervalMs":1}`), nil
			}
			return json.RawMessage(`{"resultType":"complete","taskId":"srv-9","status":"completed","result":{"content":[{"type":"resource_link","uri":"file:///r.txt","name":"r"}]}}`), nil
		}
		return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "no %s", method)
	}
	_, h := memTrunk(t, memserver.Set{"v2": srv}, map[string]map[string]any{"v2": {"protocolVersion": "2026-07-28"}}, nil, nil)
	const want = `"uri":"mcptrunk://v2/file:///r.txt"`
	res, errObj := h.call("tools/call", `{"name":"mcp__v2__must","arguments":{},`+statelessMeta(`{}`)+`}`)
	if !strings.Contains(string(errObj), `"code":-32021`) {
		t.Errorf("a stateless host without the extension: %s %s; want the server's -32021", res, errObj)
	}
	h.initialize(`{}`)
	res, errObj = h.call("tools/call", `{"name":"mcp__v2__must","arguments":{}}`)
	if !strings.Contains(string(res), want) {
		t.Errorf("a 2025-11-25 host: %s %s; want the task's result", res, errObj)
	}
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(calls, " "); got != "tools/call tools/call tasks/get tasks/get" {
		t.Errorf("the server was asked %q", got)
	}
}
