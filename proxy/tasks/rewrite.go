package tasks

import (
	"encoding/json"

	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/proxy/translate"
)

// Extension is the identifier of the 2026-07-28 tasks extension (SEP-2663):
// a server that declares it may answer a tools/call from a client that
// declared it too with a flat CreateTaskResult (resultType "task", the
// task's taskId and status at the top level), which the client then
// follows with tasks/get (the status, and the result inlined once done),
// tasks/update (answers to the task's input requests) and tasks/cancel.
const Extension = "io.modelcontextprotocol/tasks"

// resultTypeTask is the resultType of a CreateTaskResult.
const resultTypeTask = "task"

// DeclaresExtension reports whether capabilities declare the tasks
// extension under extensions.
func DeclaresExtension(caps json.RawMessage) bool {
	start, end, found, err := rawjson.FieldSpan(caps, "extensions")
	if err != nil || !found {
		return false
	}
	return rawjson.HasField(caps[start:end], Extension)
}

// IsCreated reports whether a tools/call result is a 2026-07-28
// CreateTaskResult.
func IsCreated(res json.RawMessage) bool {
	rt, err := rawjson.StringField(res, "resultType")
	return err == nil && rt == resultTypeTask
}

// StatusMethod is the notification by which a server tells its client a
// task's status changed (2025-11-25); NotificationMethod the extension's,
// sent on a subscriptions/listen that named the task (2026-07-28), the
// task as tasks/get would answer.
const (
	StatusMethod       = "notifications/tasks/status"
	NotificationMethod = "notifications/tasks"
)

// offers reports whether a server's capabilities declare the core tasks
// capability, and with what ("" for the capability itself, or one of its
// members: "list", "cancel").
func offers(caps json.RawMessage, what string) bool {
	// Read as spans, not decoded: it runs on every tools/call.
	start, end, found, err := rawjson.FieldSpan(caps, "tasks")
	if err != nil || !found || string(caps[start:end]) == "null" {
		return false
	}
	if what == "" {
		return true
	}
	s, e, found, err := rawjson.FieldSpan(caps[start:end], what)
	return err == nil && found && string(caps[start:end][s:e]) != "null"
}

// OffersAny reports whether a server's capabilities declare tasks of
// either model: the 2025-11-25 capability or the 2026-07-28 extension.
func OffersAny(caps json.RawMessage) bool { return offers(caps, "") || DeclaresExtension(caps) }

// required reports whether a tool (its definition as the server listed it)
// can only be called as a task: execution.taskSupport is "required".
func required(tool json.RawMessage) bool {
	start, end, found, err := rawjson.FieldSpan(tool, "execution")
	if err != nil || !found {
		return false
	}
	support, _ := rawjson.StringField(tool[start:end], "taskSupport")
	return support == "required"
}

// supports reports whether a tool (its definition) may be called as a
// task: execution.taskSupport "optional" or "required".
func supports(tool json.RawMessage) bool {
	start, end, found, err := rawjson.FieldSpan(tool, "execution")
	if err != nil || !found {
		return false
	}
	support, _ := rawjson.StringField(tool[start:end], "taskSupport")
	return support == "optional" || support == "required"
}

// RewriteID replaces the taskId member of a task object (tasks/get's and
// tasks/cancel's results, an entry of tasks/list, the task of a
// CreateTaskResult) by issue's id for it. An object without one is kept.
func RewriteID(task json.RawMessage, issue func(string) string) json.RawMessage {
	id, err := rawjson.StringField(task, "taskId")
	if err != nil || id == "" {
		return task
	}
	out, err := rawjson.ReplaceString(task, "taskId", issue(id))
	if err != nil {
		return task
	}
	return out
}

// Relate rewrites the task id a message's related-task _meta names.
func Relate(msg json.RawMessage, issue func(string) string) json.RawMessage {
	related := rawjson.MetaValue(msg, translate.RelatedTaskKey)
	if related == nil {
		return msg
	}
	start, end, found, err := rawjson.FieldSpan(msg, "_meta")
	if err != nil || !found {
		return msg
	}
	meta, err := rawjson.Object(msg[start:end])
	if err != nil {
		return msg
	}
	meta[translate.RelatedTaskKey] = RewriteID(related, issue)
	b, err := json.Marshal(meta)
	if err != nil {
		return msg
	}
	out, err := rawjson.ReplaceField(msg, "_meta", b)
	if err != nil {
		return msg
	}
	return out
}

// Created rewrites a tools/call result that is a CreateTaskResult (it has a
// `task` member: the call asked for a task) to carry issue's id, and
// returns the server's own id of the task ("" when the result is no task).
func Created(res json.RawMessage, issue func(string) string) (json.RawMessage, string) {
	start, end, found, err := rawjson.FieldSpan(res, "task")
	if err != nil || !found {
		return res, ""
	}
	task := res[start:end]
	id, _ := rawjson.StringField(task, "taskId")
	out, err := rawjson.ReplaceField(res, "task", RewriteID(task, issue))
	if err != nil {
		return res, id
	}
	return Relate(out, issue), id
}

// Inlined rewrites the result a 2026-07-28 tasks/get inlines (a finished
// task's tool result, under "result") with rewrite; a task without one is
// kept.
func Inlined(task json.RawMessage, rewrite func(json.RawMessage) json.RawMessage) json.RawMessage {
	start, end, found, err := rawjson.FieldSpan(task, "result")
	if err != nil || !found {
		return task
	}
	out, err := rawjson.ReplaceField(task, "result", rewrite(task[start:end]))
	if err != nil {
		return task
	}
	return out
}
