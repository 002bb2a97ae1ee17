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
	"github.com/mcptrunk/mcptrunk/proxy/translate"
)

// A 2025-11-25 host's task on a 2026-07-28 server: the trunk declares
// task-augmented tools/call, creates the task with the extension declared
// (no task member), and the host gets a 2025-11-25 task under an id of the
// trunk's; tasks/get answers the 2025 Task, tasks/result waits for the end,
// putting the task's input request to the host as a real elicitation that
// names the task, and answers the result with its URIs exported and the
// host's task id; the task's status reaches the host as notifications;
// tasks/cancel cancels it at the server.
func TestTasksAcrossHost2025(t *testing.T) {
	srv, got := taskServerV2()
	_, h := memTrunk(t, memserver.Set{"v2": srv}, map[string]map[string]any{"v2": {"protocolVersion": "2026-07-28"}}, nil, nil)
	h.answer = func(method string, params json.RawMessage) string { return `{"action":"accept","content":{}}` }
	init, errObj := h.call("initialize", `{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"memhost","version":"1"}}`)
	if !strings.Contains(string(init), `"tasks":{"cancel":{},"list":{},"requests":{"tools":{"call":{}}}}`) {
		t.Errorf("initialize: %s %s; want tasks/list, tasks/cancel and task-augmented tools/call declared", init, errObj)
	}
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	h.tools()

	res, errObj := h.call("tools/call", `{"name":"mcp__v2__slow","arguments":{},"task":{"ttl":60000}}`)
	var created struct {
		Task map[string]json.RawMessage
	}
	if json.Unmarshal(res, &created) != nil || created.Task == nil {
		t.Fatalf("tools/call: %s %s; want a 2025-11-25 CreateTaskResult", res, errObj)
	}
	var id string
	_ = json.Unmarshal(created.Task["taskId"], &id)
	if id == "" || id == "srv-1" || string(created.Task["status"]) != `"working"` || string(created.Task["pollInterval"]) != "100" || string(created.Task["ttl"]) != "60000" || created.Task["pollIntervalMs"] != nil {
		t.Errorf("the task: %s; want the trunk's id, the server's status, pollInterval and ttl in 2025-11-25's names", res)
	}
	if calls := got("tools/call"); len(calls) != 1 || rawjson.HasField(json.RawMessage(calls[0]), "task") || !tasks.DeclaresExtension(rawjson.MetaValue(json.RawMessage(calls[0]), protocol.MetaClientCapabilities)) {
		t.Errorf("the server's tools/call: %q; want the extension declared and no task member", calls)
	}

	res, errObj = h.call("tasks/get", `{"taskId":"`+id+`"}`)
	if !strings.Contains(string(res), `"status":"input_required"`) || !strings.Contains(string(res), `"taskId":"`+id+`"`) || rawjson.HasField(res, "inputRequests") || rawjson.HasField(res, "resultType") {
		t.Errorf("tasks/get: %s %s; want the 2025-11-25 Task under the host's id", res, errObj)
	}

	// The server has no tasks/list: the trunk lists the host's task on it,
	// read with tasks/get, as a 2025-11-25 Task.
	res, errObj = h.call("tasks/list", `{}`)
	var listed struct{ Tasks []map[string]json.RawMessage }
	if json.Unmarshal(res, &listed) != nil || len(listed.Tasks) != 1 || string(listed.Tasks[0]["taskId"]) != `"`+id+`"` ||
		string(listed.Tasks[0]["status"]) != `"input_required"` || string(listed.Tasks[0]["ttl"]) != "60000" || listed.Tasks[0]["inputRequests"] != nil {
		t.Errorf("tasks/list: %s %s; want the host's one task, under its id, as a 2025-11-25 Task", res, errObj)
	}
	if calls := got("tasks/list"); len(calls) != 0 {
		t.Errorf("the server was asked tasks/list %d times; it has none", len(calls))
	}

	res, errObj = h.call("tasks/result", `{"taskId":"`+id+`"}`)
	if !strings.Contains(string(res), `"uri":"mcptrunk://v2/file:///out.txt"`) {
		t.Errorf("tasks/result: %s %s; want the task's result, its URIs exported", res, errObj)
	}
	if related := rawjson.MetaValue(res, translate.RelatedTaskKey); !strings.Contains(string(related), `"`+id+`"`) {
		t.Errorf("tasks/result's related task: %s, want %s", related, id)
	}
	var asked json.RawMessage
	for _, m := range h.seen {
		if string(m["method"]) == `"elicitation/create"` {
			asked = m["params"]
		}
	}
	if !strings.Contains(string(asked), `"sure?"`) || !strings.Contains(string(rawjson.MetaValue(asked, translate.RelatedTaskKey)), `"`+id+`"`) {
		t.Errorf("the host was asked %s; want the task's elicitation naming the host's task", asked)
	}
	if u := got("tasks/update"); len(u) != 1 || !strings.Contains(u[0], `"inputResponses":{"k1":{"action":"accept"`) {
		t.Errorf("tasks/update: %q; want the host's answer under k1", u)
	}

	// The trunk watches the task for the host: its end comes as a 2025-11-25
	// status notification under the host's id.
	completed := func(m map[string]json.RawMessage) bool {
		return string(m["method"]) == `"notifications/tasks/status"` && strings.Contains(string(m["params"]), `"status":"completed"`)
	}
	i := slices.IndexFunc(h.seen, completed)
	status := map[string]json.RawMessage{}
	if i >= 0 {
		status = h.seen[i]
	}
	for !completed(status) {
		status = map[string]json.RawMessage{}
		_ = json.Unmarshal([]byte(h.next("the task's status notification")), &status)
	}
	if !strings.Contains(string(status["params"]), `"taskId":"`+id+`"`) || rawjson.HasField(status["params"], "result") {
		t.Errorf("notifications/tasks/status: %s; want the 2025-11-25 Task under the host's id", status["params"])
	}

	res, errObj = h.call("tasks/cancel", `{"taskId":"`+id+`"}`)
	if !strings.Contains(string(res), `"taskId":"`+id+`"`) || rawjson.HasField(res, "resultType") {
		t.Errorf("tasks/cancel: %s %s; want the 2025-11-25 Task", res, errObj)
	}
	if c := got("tasks/cancel"); len(c) != 1 || !strings.Contains(c[0], `"srv-1"`) {
		t.Errorf("tasks/cancel reached the server as %q", c)
	}
}

// taskServer2025 is a 2025-11-25 server whose tool job takes a task:
// the task is working until done is set, then completed with a resource
// link (tasks/result); got records each tasks request's params.
func taskServer2025() (srv *memserver.Server, finish func(), got func(string) []string) {
	var (
		mu    sync.Mutex
		done  bool
		calls = map[string][]string{}
	)
	task := func(status string) string {
		return `{"taskId":"up-3","status":"` + status + `","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttl":null,"pollInterval":50}`
	}
	srv = &memserver.Server{
		Capabilities: json.RawMessage(`{"tools":{},"tasks":{"cancel":{},"requests":{"tools":{"call":{}}}}}`),
		Tools:        []json.RawMessage{json.RawMessage(`{"name":"job","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}}`)},
		Handle: func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
			mu.Lock()
			defer mu.Unlock()
			calls[method] = append(calls[method], string(params))
			switch method {
			case "tools/call":
				if !rawjson.HasField(params, "task") {
					return json.RawMessage(`{"content":[{"type":"text","text":"ran at once"}]}`), nil
				}
				return json.RawMessage(`{"task":` + task("working") + `}`), nil
			case "tasks/get":
				if done {
					return json.RawMessage(task("completed")), nil
				}
				return json.RawMessage(task("working")), nil
			case "tasks/result":
				return json.RawMessage(`{"content":[{"type":"resource_link","uri":"file:///job.txt","name":"job"}],"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"up-3"}}}`), nil
			case "tasks/cancel":
				return json.RawMessage(task("cancelled")), nil
			}
			return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "no %s", method)
		},
	}
	return srv, func() {
			mu.Lock()
			defer mu.Unlock()
			done = true
		}, func(method string) []string {
			mu.Lock()
			defer mu.Unlock()
			return append([]string(nil), calls[method]...)
		}
}

// A 2026-07-28 host with the extension calls a 2025-11-25 server's
// task-supporting tool: the trunk declares the extension, creates a
// 2025-11-25 task and answers the host the extension's flat
// CreateTaskResult under an id of the trunk's; tasks/get answers the flat
// task, with the result inlined (URIs exported, no related task) once it
// completed; tasks/update of a task that asked nothing is refused naming it
// (-32602); tasks/cancel cancels it at the server and answers the empty
// ack.
func TestTasksAcrossExtensionHost(t *testing.T) {
	srv, finish, got := taskServer2025()
	_, h := memTrunk(t, memserver.Set{"v1": srv}, nil, nil, nil)
	withTasks := statelessMeta(`{"extensions":{"` + tasks.Extension + `":{}}}`)
	if disc, errObj := h.call("server/discover", `{`+withTasks+`}`); !strings.Contains(string(disc), `"`+tasks.Extension+`"`) {
		t.Errorf("server/discover: %s %s; want the tasks extension declared", disc, errObj)
	}

	res, errObj := h.call("tools/call", `{"name":"mcp__v1__job","arguments":{},`+withTasks+`}`)
	id, _ := rawjson.StringField(res, "taskId")
	if !tasks.IsCreated(res) || id == "" || id == "up-3" || !strings.Contains(string(res), `"pollIntervalMs":50`) || rawjson.HasField(res, "task") || rawjson.HasField(res, "ttlMs") {
		t.Fatalf("tools/call: %s %s; want the extension's CreateTaskResult under an id of the trunk's", res, errObj)
	}
	if calls := got("tools/call"); len(calls) != 1 || !strings.Contains(calls[0], `"task":{}`) {
		t.Errorf("the server's tools/call: %q; want a task asked for", calls)
	}

	res, errObj = h.call("tasks/get", `{"taskId":"`+id+`",`+withTasks+`}`)
	if rt, _ := rawjson.StringField(res, "resultType"); rt != "complete" || !strings.Contains(string(res), `"status":"working"`) || rawjson.HasField(res, "result") {
		t.Errorf("tasks/get of a working task: %s %s", res, errObj)
	}
	finish()
	res, errObj = h.call("tasks/get", `{"taskId":"`+id+`",`+withTasks+`}`)
	if !strings.Contains(string(res), `"status":"completed"`) || !strings.Contains(string(res), `"uri":"mcptrunk://v1/file:///job.txt"`) || strings.Contains(string(res), "up-3") {
		t.Errorf("tasks/get of the completed task: %s %s; want its result inlined, exported, without the server's id", res, errObj)
	}
	if taskID, _ := rawjson.StringField(res, "taskId"); taskID != id {
		t.Errorf("tasks/get answered id %q, want %q", taskID, id)
	}

	if _, errObj := h.call("tasks/update", `{"taskId":"`+id+`","inputResponses":{},`+withTasks+`}`); !strings.Contains(string(errObj), "-32602") || !strings.Contains(string(errObj), id) {
		t.Errorf("tasks/update: %s; want -32602 naming the task (the trunk holds no input request of it)", errObj)
	}
	if res, errObj := h.call("tasks/cancel", `{"taskId":"`+id+`",`+withTasks+`}`); string(res) != `{"resultType":"complete"}` {
		t.Errorf("tasks/cancel: %s %s; want the empty ack", res, errObj)
	}
	if c := got("tasks/cancel"); len(c) != 1 || !strings.Contains(c[0], `"up-3"`) {
		t.Errorf("tasks/cancel reached the server as %q", c)
	}
}
