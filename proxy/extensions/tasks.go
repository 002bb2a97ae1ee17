package extensions

import (
	"encoding/json"

	"github.com/mcptrunk/mcptrunk/internal/rawjson"
)

// TasksKey is the capability by which a 2025-11-25 server declares tasks
// (the core capability; at 2026-07-28 tasks are the extension
// "io.modelcontextprotocol/tasks").
const TasksKey = "tasks"

// Tasks is the tasks capability the trunk declares to a host, given the
// capabilities (as sent) of the ready servers: nil when none declares
// tasks. The trunk routes tasks/get and tasks/result for every server;
// tasks/list and tasks/cancel it declares when some server does (it lists
// and cancels on those), and task-augmented tools/call, the one request a
// host may make a task of here, when some server accepts it.
func Tasks(servers []json.RawMessage) json.RawMessage {
	var declared, list, cancel, toolCall bool
	for _, caps := range servers {
		m, err := rawjson.Object(caps)
		if err != nil || m[TasksKey] == nil {
			continue
		}
		tasks, err := rawjson.Object(m[TasksKey])
		if err != nil {
			continue
		}
		declared = true
		list = list || tasks["list"] != nil
		cancel = cancel || tasks["cancel"] != nil
		if req, err := rawjson.Object(tasks["requests"]); err == nil {
			if tools, err := rawjson.Object(req["tools"]); err == nil {
				toolCall = toolCall || tools["call"] != nil
			}
		}
	}
	if !declared {
		return nil
	}
	out := map[string]any{}
	if list {
		out["list"] = struct{}{}
	}
	if cancel {
		out["cancel"] = struct{}{}
	}
	if toolCall {
		out["requests"] = map[string]any{"tools": map[string]any{"call": struct{}{}}}
	}
	b, _ := json.Marshal(out) // maps of maps always encode
	return b
}
