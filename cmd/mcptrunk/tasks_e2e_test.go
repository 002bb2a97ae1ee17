package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestTasksEverything: server-everything's simulate-research-query, which
// runs only as a task (execution.taskSupport "required"), through the
// trunk for a 2025-11-25 host that declares tasks: the call creates a task
// the host knows by the trunk's id, tasks/get and tasks/list show it under
// that id, tasks/result waits for and returns the report, and an id the
// trunk did not issue is refused.
func TestTasksEverything(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 2*time.Minute)
	everything := server{"command": npmNode(t), "args": []string{npmScript(t, everythingPkg), "stdio"}, "timeouts": slowTimeouts}
	cfg := writeConfig(t, map[string]server{"everything": everything}, map[string]any{"startupWait": "60s"})
	c, _ := rawInit(t, ctx, cfg, "2025-11-25", `{"tasks":{"list":{},"cancel":{}}}`)
	if tools := string(c.result(ctx, "tools/list", `{}`)); !strings.Contains(tools, "mcp__everything__simulate-research-query") {
		t.Fatalf("simulate-research-query is not listed: %s", tools)
	}
	res := c.result(ctx, "tools/call", `{"name":"mcp__everything__simulate-research-query","arguments":{"topic":"trunks"},"task":{"ttl":60000}}`)
	var created struct {
		Task struct {
			TaskID       string `json:"taskId"`
			Status       string `json:"status"`
			PollInterval int    `json:"pollInterval"`
		} `json:"task"`
	}
	if err := json.Unmarshal(res, &created); err != nil || created.Task.TaskID == "" {
		t.Fatalf("tools/call with a task: %s", res)
	}
	id := created.Task.TaskID
	if !strings.HasPrefix(id, "mcptrunk-task1.") {
		t.Fatalf("the host got the server's task id %q", id)
	}
	params := `{"taskId":` + mustJSON(id) + `}`
	if got := c.result(ctx, "tasks/get", params); !strings.Contains(string(got), mustJSON(id)) {
		t.Errorf("tasks/get: %s, want the task under %s", got, id)
	}
	if got := c.result(ctx, "tasks/list", `{}`); !strings.Contains(string(got), mustJSON(id)) {
		t.Errorf("tasks/list: %s, lacks %s", got, id)
	}
	report := c.result(ctx, "tasks/result", params) // waits for the task to end
	if !strings.Contains(string(report), "Research Report: trunks") {
		t.Errorf("tasks/result: %s, want the report", report)
	}
	if !strings.Contains(string(report), mustJSON(id)) {
		t.Errorf("tasks/result: %s, want its related task under %s", report, id)
	}
	if r := c.call(ctx, "tasks/get", `{"taskId":"mcptrunk-task1.ZXZlcnl0aGluZwB4.AAAA"}`); r.Err == nil || r.Err.Code != -32602 {
		t.Errorf("a forged task id: %s %v, want -32602", r.Result, r.Err)
	}
}

// TestTasksEverythingDriven: a host that declares no tasks calls
// simulate-research-query as a plain tool; the trunk runs the task and
// answers with the report.
func TestTasksEverythingDriven(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 2*time.Minute)
	everything := server{"command": npmNode(t), "args": []string{npmScript(t, everythingPkg), "stdio"}, "timeouts": slowTimeouts}
	cfg := writeConfig(t, map[string]server{"everything": everything}, map[string]any{"startupWait": "60s"})
	c, _ := rawInit(t, ctx, cfg, "2025-11-25", `{}`)
	c.result(ctx, "tools/list", `{}`)
	res := c.result(ctx, "tools/call", `{"name":"mcp__everything__simulate-research-query","arguments":{"topic":"trunks"}}`)
	if !strings.Contains(string(res), "Research Report: trunks") || strings.Contains(string(res), `"task"`) {
		t.Errorf("tools/call: %s, want the report", res)
	}
}
