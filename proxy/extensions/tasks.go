package extensions

import (
	"bytes"
	"encoding/json"
	"maps"

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
// host may make a task of here, when some server accepts it. A server with
// the 2026-07-28 extension counts as one that cancels and accepts
// task-augmented calls, and one whose tasks the trunk lists (a 2025-11-25
// host's tasks on it, proxy/tasks/list.go).
func Tasks(servers []json.RawMessage) json.RawMessage {
	var declared, list, cancel, toolCall bool
	for _, caps := range servers {
		m, err := rawjson.Object(caps)
		if err != nil {
			continue
		}
		if OfRaw(caps)[TasksExtension] != nil {
			// A 2026-07-28 server's tasks: the trunk gives a 2025-11-25
			// host's task on it to the host in that host's model
			// (proxy/tasks/across.go), cancels them and lists them.
			declared, list, cancel, toolCall = true, true, true, true
		}
		if m[TasksKey] == nil {
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

// WithTasksExtension is the extensions a server declares (OfRaw), with
// the tasks extension added when the server declares 2025-11-25 tasks on
// tools/call: the trunk gives a 2026-07-28 host's task on it to the host
// as the extension's (proxy/tasks/across.go).
func WithTasksExtension(caps json.RawMessage) map[string]json.RawMessage {
	ext := OfRaw(caps)
	if ext[TasksExtension] != nil || !bytes.Contains(Tasks([]json.RawMessage{caps}), []byte(`"call"`)) {
		return ext
	}
	out := maps.Clone(ext)
	if out == nil {
		out = map[string]json.RawMessage{}
	}
	out[TasksExtension] = json.RawMessage(`{}`)
	return out
}
