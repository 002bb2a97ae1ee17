package proxy

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/proxy/catalog"
	"github.com/mcptrunk/mcptrunk/proxy/translate"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// Tasks at 2025-11-25 (the core `tasks` capability): a host calls a tool
// with a `task` member, the server answers with a task, and the host then
// polls, fetches the result of, lists or cancels it by id. The trunk keeps
// no table of tasks: the id a host gets is translate.TaskIDs', which names
// the server and the server's own id under a MAC bound to the session, so
// tasks/get, tasks/result and tasks/cancel route by the id alone, and a host
// can reach only the tasks created in its own session.

// taskSession is the session a task id is bound to: the HTTP session's
// id, "" on stdio (one host per process).
func taskSession(ctx context.Context) string {
	if s := hostRequestOf(ctx).session; s != nil {
		return s.id
	}
	return ""
}

// handleTasks answers the tasks methods, which exist for a host only when
// some server behind the trunk offers tasks (and the trunk declares them).
func (t *Trunk) handleTasks(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	t.waitSettled(ctx)
	if !t.anyOffersTasks() {
		return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "method %q is not supported: no server behind mcptrunk offers tasks", method)
	}
	switch method {
	case "tasks/list":
		return t.listTasks(ctx)
	case "tasks/result":
		return t.bounded(method, params)(t.routeTask(ctx, method, params))
	}
	return t.routeTask(ctx, method, params)
}

// anyOffersTasks reports whether a server the trunk knows declared tasks.
func (t *Trunk) anyOffersTasks() bool {
	for _, c := range t.clients() {
		if offersTasks(c.Init().RawCapabilities, "") {
			return true
		}
	}
	return false
}

// routeTask forwards tasks/get, tasks/result and tasks/cancel to the
// server the host's task id names, with the server's own id, and gives the
// answer back with the trunk's id in it.
func (t *Trunk) routeTask(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	taskID, err := translate.RequiredString(method, params, "taskId", "the task's id")
	if err != nil {
		return nil, err
	}
	server, upID, err := t.taskIDs.Open(taskSession(ctx), taskID)
	if err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "%s: %v", method, err)
	}
	c, _, err := t.owner(ctx, server, "task", taskID, params)
	if err != nil {
		return nil, err
	}
	forward, err := rawjson.ReplaceString(params, "taskId", upID)
	if err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "%s: %v", method, err)
	}
	res, err := c.Call(ctx, method, forward)
	if err != nil {
		return nil, err
	}
	issue := t.issueTaskID(ctx, server)
	if method == "tasks/result" {
		res = relateTask(res, issue)
		if !t.snapshot().Unprefixed(server) {
			res = catalog.NamespaceToolResult(server, res)
		}
		return res, nil
	}
	return rewriteTaskID(res, issue), nil
}

// issueTaskID returns the function that turns server's task ids into the
// ids the host of ctx gets.
func (t *Trunk) issueTaskID(ctx context.Context, server string) func(string) string {
	session := taskSession(ctx)
	return func(id string) string { return t.taskIDs.Issue(session, server, id) }
}

// rewriteTaskID replaces the taskId member of a task object (tasks/get's
// and tasks/cancel's results, an entry of tasks/list, the task of a
// CreateTaskResult) by issue's id for it. An object without one is kept.
func rewriteTaskID(task json.RawMessage, issue func(string) string) json.RawMessage {
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

// relateTask rewrites the task id a message's related-task _meta names.
func relateTask(msg json.RawMessage, issue func(string) string) json.RawMessage {
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
	meta[translate.RelatedTaskKey] = rewriteTaskID(related, issue)
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

// taskCreated rewrites a tools/call result that is a CreateTaskResult (a
// `task` member: the host asked for a task) to carry the trunk's id, and
// records the session that owns the task for its status notifications.
func (t *Trunk) taskCreated(ctx context.Context, server string, res json.RawMessage) json.RawMessage {
	start, end, found, err := rawjson.FieldSpan(res, "task")
	if err != nil || !found {
		return res
	}
	task := res[start:end]
	if id, _ := rawjson.StringField(task, "taskId"); id != "" {
		t.hosts.ownTask(server, id, hostRequestOf(ctx).session)
	}
	issue := t.issueTaskID(ctx, server)
	out, err := rawjson.ReplaceField(res, "task", rewriteTaskID(task, issue))
	if err != nil {
		return res
	}
	return relateTask(out, issue)
}

// listTasks answers tasks/list with the tasks of every ready server that
// lists its tasks, each id rewritten. The servers' pages are read to the
// end, so the host gets one page: a host's own tasks are few.
func (t *Trunk) listTasks(ctx context.Context) (json.RawMessage, error) {
	all := []json.RawMessage{}
	for _, c := range t.clients() {
		if state, _ := c.State(); state != upstream.StateReady || !offersTasks(c.Init().RawCapabilities, "list") {
			continue
		}
		issue := t.issueTaskID(ctx, c.Name())
		tasks, err := listServerTasks(ctx, c)
		if err != nil {
			t.logger.Warn("listing a server's tasks failed", "server", c.Name(), "error", err)
			continue
		}
		for _, task := range tasks {
			all = append(all, rewriteTaskID(task, issue))
		}
	}
	return json.Marshal(map[string]any{"tasks": all})
}

// maxTaskPages bounds the pages of one server's tasks/list.
const maxTaskPages = 100

func listServerTasks(ctx context.Context, c *upstream.Client) ([]json.RawMessage, error) {
	var (
		out    []json.RawMessage
		cursor string
	)
	for range maxTaskPages {
		params := json.RawMessage(`{}`)
		if cursor != "" {
			params, _ = json.Marshal(map[string]string{"cursor": cursor})
		}
		res, err := c.Call(ctx, "tasks/list", params)
		if err != nil {
			return out, err
		}
		var page struct {
			Tasks      []json.RawMessage `json:"tasks"`
			NextCursor string            `json:"nextCursor"`
		}
		if err := json.Unmarshal(res, &page); err != nil {
			return out, errors.New("tasks/list: the result is not a list of tasks")
		}
		out = append(out, page.Tasks...)
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	return out, nil
}

// offersTasks reports whether a server's capabilities declare the core
// tasks capability, and with what ("" for the capability itself, or one of
// its members: "list", "cancel").
func offersTasks(caps json.RawMessage, what string) bool {
	m, err := rawjson.Object(caps)
	if err != nil || m["tasks"] == nil {
		return false
	}
	if what == "" {
		return true
	}
	tasks, err := rawjson.Object(m["tasks"])
	return err == nil && tasks[what] != nil
}
