package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/internal/testkit/taskserver"
)

// postStateless sends one 2026-07-28 request (params: the members of its
// params object, to which meta, a "_meta" member, is added) to a trunk's
// HTTP endpoint with its Mcp-* headers (name: Mcp-Name), and returns its
// result or its error object.
func postStateless(t testing.TB, ctx context.Context, url, meta, method, name, params string) (result map[string]json.RawMessage, errObj json.RawMessage) {
	t.Helper()
	reply, err := postMCP(ctx, url, `{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":{`+params+`,`+meta+`}}`,
		map[string]string{protocol.HeaderProtocolVersion: "2026-07-28", protocol.HeaderMethod: method, protocol.HeaderName: name})
	if err != nil {
		t.Fatalf("%s through %s: %v", method, url, err)
	}
	for _, msg := range reply.messages {
		var m struct {
			Result map[string]json.RawMessage
			Error  json.RawMessage
		}
		if json.Unmarshal([]byte(msg), &m) == nil && (m.Result != nil || m.Error != nil) {
			return m.Result, m.Error
		}
	}
	t.Fatalf("%s through %s: HTTP %d, no answer in %q", method, url, reply.status, reply.messages)
	return nil, nil
}

// TestTasksEverythingInputHTTP: a 2026-07-28 host with the tasks
// extension and elicitation, over serve --http (raw requests), calls
// server-everything's simulate-research-query (a 2025-11-25 task-only
// tool) with ambiguous=true. The task goes input_required and the server
// asks for a clarification only while its client waits on tasks/result:
// the host's tasks/get lists that elicitation as the task's inputRequests,
// its tasks/update answers it, and tasks/get of the completed task inlines
// the report written with the host's answer. A second task, cancelled by
// the host while it waits for input, ends cancelled, and an update of its
// input is then refused naming it.
func TestTasksEverythingInputHTTP(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 2*time.Minute)
	everything := server{"command": npmNode(t), "args": []string{npmScript(t, everythingPkg), "stdio"}, "timeouts": slowTimeouts}
	trunk := startHTTPTrunk(t, ctx, writeConfig(t, map[string]server{"everything": everything}, map[string]any{"startupWait": "60s"}))
	meta := `"_meta":{"` + protocol.MetaProtocolVersion + `":"2026-07-28","` + protocol.MetaClientCapabilities + `":{"elicitation":{},"extensions":{"` + taskserver.Extension + `":{}}}}`
	call := func(method, name, params string) (map[string]json.RawMessage, json.RawMessage) {
		t.Helper()
		return postStateless(t, ctx, trunk.url, meta, method, name, params)
	}
	const tool = "mcp__everything__simulate-research-query"
	start := func() string {
		t.Helper()
		created, errObj := call("tools/call", tool, `"name":"`+tool+`","arguments":{"topic":"python","ambiguous":true}`)
		var id string
		if json.Unmarshal(created["taskId"], &id) != nil || !strings.HasPrefix(id, "mcptrunk-task") || string(created["resultType"]) != `"task"` {
			t.Fatalf("tools/call: %v %s, want the extension's CreateTaskResult under the trunk's id", created, errObj)
		}
		return id
	}
	// poll has tasks/get of id answer until done says so, as a host polls.
	poll := func(id, what string, done func(task map[string]json.RawMessage) bool) map[string]json.RawMessage {
		t.Helper()
		var last map[string]json.RawMessage
		if err := eventually(ctx, 100*time.Millisecond, func() error {
			task, errObj := call("tasks/get", id, fmt.Sprintf(`"taskId":%q`, id))
			if errObj != nil {
				return fmt.Errorf("tasks/get: %s", errObj)
			}
			if last = task; !done(task) {
				return fmt.Errorf("status %s", task["status"])
			}
			return nil
		}); err != nil {
			t.Fatalf("waiting for %s: %v (last: %v)", what, err, last)
		}
		return last
	}
	asking := func(task map[string]json.RawMessage) bool { return task["inputRequests"] != nil }
	inputKey := func(task map[string]json.RawMessage) string {
		t.Helper()
		var inputs map[string]struct {
			Method string
			Params json.RawMessage
		}
		_ = json.Unmarshal(task["inputRequests"], &inputs)
		for key, in := range inputs {
			if len(inputs) != 1 || in.Method != "elicitation/create" || !strings.Contains(string(in.Params), "multiple interpretations") || string(task["status"]) != `"input_required"` {
				t.Fatalf("the task at input_required: %v, want server-everything's one elicitation", task)
			}
			return key
		}
		return ""
	}

	id := start()
	key := inputKey(poll(id, "the task's input request", asking))
	ack, errObj := call("tasks/update", id, fmt.Sprintf(`"taskId":%q,"inputResponses":{%q:{"action":"accept","content":{"interpretation":"snake"}}}`, id, key))
	if string(ack["resultType"]) != `"complete"` || len(ack) != 1 {
		t.Fatalf("tasks/update: %v %s, want the ack", ack, errObj)
	}
	done := poll(id, "the task's end", func(task map[string]json.RawMessage) bool { return string(task["status"]) == `"completed"` })
	if report := string(done["result"]); !strings.Contains(report, "Research Report: python (snake)") || strings.Contains(report, "related-task") {
		t.Errorf("the completed task's result: %s, want the report with the host's clarification", report)
	}

	id = start()
	key = inputKey(poll(id, "the second task's input request", asking))
	if ack, errObj := call("tasks/cancel", id, fmt.Sprintf(`"taskId":%q`, id)); string(ack["resultType"]) != `"complete"` {
		t.Fatalf("tasks/cancel: %v %s, want the ack", ack, errObj)
	}
	if task, errObj := call("tasks/get", id, fmt.Sprintf(`"taskId":%q`, id)); string(task["status"]) != `"cancelled"` {
		t.Errorf("tasks/get after the cancel: %v %s, want cancelled", task, errObj)
	}
	if _, errObj := call("tasks/update", id, fmt.Sprintf(`"taskId":%q,"inputResponses":{%q:{"action":"accept"}}`, id, key)); !strings.Contains(string(errObj), "-32602") || !strings.Contains(string(errObj), id) {
		t.Errorf("tasks/update of the cancelled task: %s, want -32602 naming it", errObj)
	}
}
