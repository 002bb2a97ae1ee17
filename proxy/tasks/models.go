package tasks

import (
	"encoding/json"

	"github.com/mcptrunk/mcptrunk/internal/rawjson"
)

// The two models describe one task in two shapes. 2025-11-25 nests it in a
// CreateTaskResult (`{"task":{...}}`) and names its times ttl and
// pollInterval; 2026-07-28 makes it the result itself (resultType "task",
// its members at the top) and names them ttlMs and pollIntervalMs (both in
// milliseconds), and tasks/get answers with the same flat object, resultType
// "complete", a finished task's result or error inlined. The trunk turns
// one into the other when a host's task is on a server of the other model
// (across.go).

// taskMembers are the members of a task both models share, by their
// 2025-11-25 names, with the 2026-07-28 name where it differs.
var taskMembers = []struct{ v2025, flat string }{
	{"taskId", "taskId"},
	{"status", "status"},
	{"statusMessage", "statusMessage"},
	{"createdAt", "createdAt"},
	{"lastUpdatedAt", "lastUpdatedAt"},
	{"ttl", "ttlMs"},
	{"pollInterval", "pollIntervalMs"},
}

// task2025 is a 2026-07-28 task (a CreateTaskResult or tasks/get's
// answer) as the 2025-11-25 Task object, its id issue's: the members that
// say what the task is, nothing inlined (a 2025 client reads the result
// with tasks/result). ttl is null when the server gave none (unlimited, as
// 2025-11-25 writes it).
func task2025(flat json.RawMessage, issue func(string) string) json.RawMessage {
	return convert(flat, issue, func(m struct{ v2025, flat string }) (string, string) { return m.flat, m.v2025 },
		map[string]json.RawMessage{"ttl": json.RawMessage(`null`)})
}

// flatTask is a 2025-11-25 Task object as the members of a 2026-07-28 task,
// under resultType, its id issue's.
func flatTask(task json.RawMessage, resultType string, issue func(string) string) json.RawMessage {
	rt, _ := json.Marshal(resultType)
	return convert(task, issue, func(m struct{ v2025, flat string }) (string, string) { return m.v2025, m.flat },
		map[string]json.RawMessage{"resultType": rt})
}

// created2025 is a 2026-07-28 CreateTaskResult as 2025-11-25's.
func created2025(flat json.RawMessage, issue func(string) string) json.RawMessage {
	out, _ := json.Marshal(map[string]json.RawMessage{"task": task2025(flat, issue)})
	return out
}

// flatCreated is a 2025-11-25 CreateTaskResult (`{"task":{...}}`) as
// 2026-07-28's; a result without a task is returned as it is.
func flatCreated(res json.RawMessage, issue func(string) string) json.RawMessage {
	start, end, found, err := rawjson.FieldSpan(res, "task")
	if err != nil || !found {
		return res
	}
	return flatTask(res[start:end], resultTypeTask, issue)
}

// convert copies the members of one model's task to the other's names
// (names gives from and to), the id rewritten by issue, over base.
func convert(in json.RawMessage, issue func(string) string, names func(struct{ v2025, flat string }) (from, to string), base map[string]json.RawMessage) json.RawMessage {
	members, err := rawjson.Object(in)
	if err != nil {
		members = map[string]json.RawMessage{}
	}
	out := base
	for _, m := range taskMembers {
		from, to := names(m)
		if v, ok := members[from]; ok && (string(v) != "null" || to != "ttlMs") { // 2026-07-28 leaves out an unlimited ttl
			out[to] = v
		}
	}
	if id, _ := rawjson.StringField(in, "taskId"); id != "" {
		out["taskId"], _ = json.Marshal(issue(id))
	}
	b, err := json.Marshal(out)
	if err != nil {
		return in
	}
	return b
}
