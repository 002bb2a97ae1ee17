package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/proxy/translate"
)

// A host's own task may be on a server of the other model: a 2025-11-25
// host's task-augmented call of a 2026-07-28 server's tool (toExtension),
// a 2026-07-28 host's call, with the extension, of a 2025-11-25 server's
// task-supporting tool (to2025). The server creates the task in its
// model; the host gets it in its own (models.go), and Route answers the
// host's tasks requests about it by asking the server in the server's.
// Nothing is kept but what a server's connection holds (the trunk's own
// tasks/result of a task that asks a 2026-07-28 host for input,
// across_input.go): the host's id (translate.TaskIDs) names the server and
// its id, and which model each side speaks is known from the host's
// request and the server's capabilities.

// Route answers a host's tasks requests about one server's task: passed
// through when host and server share the model, else across (below).
type Route struct {
	// Follower is the server's connection and names (Conn, Server), and
	// how to put the task's input requests to a 2025-era host (Ask, Can).
	Follower
	// ServerCaps are the server's capabilities: its model.
	ServerCaps json.RawMessage
	// Issue turns the server's task ids into the host's.
	Issue func(string) string
	// Export is a tool result of the server's as the host gets it (names
	// and URIs exported).
	Export func(json.RawMessage) json.RawMessage
	// Parking holds the trunk's own tasks/result of a 2025-11-25 task
	// that a 2026-07-28 host follows (across_input.go), sent for Host
	// (the host's request) and bounded by Timeout (timeouts.call).
	Parking *translate.Parking
	Host    translate.HostRequest
	Timeout time.Duration
}

// Answer answers method (tasks/get, tasks/result, tasks/cancel,
// tasks/update) whose params, forward, name the server's own task id, for
// a host whose request is stateless or not: the answer with the host's id
// in it, a result (tasks/result's, one tasks/get inlines) exported.
func (r *Route) Answer(ctx, life context.Context, method string, forward json.RawMessage, hostStateless bool) (json.RawMessage, error) {
	if id, _ := rawjson.StringField(forward, "taskId"); crosses(r.ServerCaps, hostStateless) {
		if hostStateless {
			return r.forExtensionHost(ctx, method, id, forward)
		}
		return r.forHost2025(ctx, life, method, id)
	}
	res, err := r.Conn.Call(ctx, method, forward)
	switch {
	case err != nil:
		return nil, err
	case method == "tasks/result":
		return r.Export(Relate(res, r.Issue)), nil
	case method == "tasks/get":
		return Inlined(RewriteID(res, r.Issue), r.Export), nil
	}
	return RewriteID(res, r.Issue), nil
}

// createAcross creates a host's task in the server's model (how:
// toExtension or to2025), call sending the tools/call with the params
// given, and returns the CreateTaskResult in the host's model, with the
// server's own id (the trunk issues the host's as for any task). A server
// that answered at once has its answer returned as it is.
func createAcross(how Mode, forward json.RawMessage, call func(json.RawMessage) (json.RawMessage, error)) (json.RawMessage, error) {
	same := func(id string) string { return id }
	var (
		params json.RawMessage
		err    error
	)
	if how == toExtension {
		params, err = rawjson.DeleteFields(forward, "task") // the extension has no task member: the server decides
	} else {
		params, err = rawjson.ReplaceField(forward, "task", json.RawMessage(`{}`))
	}
	if err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "tools/call: %v", err)
	}
	res, err := call(params)
	switch {
	case err != nil:
		return nil, err
	case how == toExtension && IsCreated(res):
		return created2025(res, same), nil
	case how == to2025:
		return flatCreated(res, same), nil
	}
	return res, nil
}

// crosses reports whether a task of a server with capabilities serverCaps
// is in the other model than a host's whose request is stateless (which
// follows tasks with the extension) or not (2025-11-25 tasks): a server
// that declares both models answers each host in its own.
func crosses(serverCaps json.RawMessage, hostStateless bool) bool {
	if hostStateless {
		return !DeclaresExtension(serverCaps) && offers(serverCaps, "")
	}
	return DeclaresExtension(serverCaps) && !offers(serverCaps, "")
}

// forHost2025 answers a 2025-11-25 host's tasks/get, tasks/result or
// tasks/cancel of a 2026-07-28 server's task id. tasks/result waits until
// the task ends (following it with tasks/get, its input requests put to
// the host), as 2025-11-25 specifies; the host's giving up on it does not
// cancel the task, which the host still owns.
func (a *Route) forHost2025(ctx, life context.Context, method, id string) (json.RawMessage, error) {
	byID, _ := json.Marshal(map[string]string{"taskId": id})
	switch method {
	case "tasks/cancel":
		if _, err := a.Conn.Call(ctx, "tasks/cancel", byID); err != nil {
			return nil, err
		}
		task, err := a.Conn.Call(ctx, "tasks/get", byID)
		if err != nil { // 2025-11-25 answers the cancelled task; say what is known
			task, _ = json.Marshal(map[string]string{"taskId": id, "status": "cancelled"})
		}
		return task2025(task, a.Issue), nil
	case "tasks/get", "tasks/result":
		task, err := a.Conn.Call(ctx, "tasks/get", byID)
		if err != nil {
			return nil, err
		}
		if method == "tasks/get" {
			return task2025(task, a.Issue), nil
		}
		f := a.Follower
		f.Owned, f.Related = true, a.Issue(id)
		res, err := f.run(ctx, life, task)
		if err != nil {
			return nil, err
		}
		related, _ := json.Marshal(map[string]string{"taskId": a.Issue(id)})
		return rawjson.ReplaceReservedMeta(a.Export(res), map[string]json.RawMessage{translate.RelatedTaskKey: related})
	}
	return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "method %q is not one of 2025-11-25's tasks methods", method)
}

// forExtensionHost answers a 2026-07-28 host's tasks/get, tasks/cancel or
// tasks/update (params: forward) of a 2025-11-25 server's task id.
// tasks/get inlines a finished task's result (or error), read with
// tasks/result; tasks/cancel answers the empty ack. A task at
// input_required has the requests its server sends during the trunk's own
// tasks/result listed as its inputRequests, which tasks/update answers
// (across_input.go).
func (a *Route) forExtensionHost(ctx context.Context, method, id string, forward json.RawMessage) (json.RawMessage, error) {
	byID, _ := json.Marshal(map[string]string{"taskId": id})
	switch method {
	case "tasks/get":
		task, err := a.Conn.Call(ctx, "tasks/get", byID)
		if err != nil {
			return nil, err
		}
		out := flatTask(task, "complete", a.Issue)
		switch status, _ := rawjson.StringField(task, "status"); status {
		case "input_required":
			return a.withInputs(ctx, id, out)
		case "completed", "failed":
		default:
			return out, nil
		}
		res, err := a.result(ctx, id)
		var rpcErr *jsonrpc.Error
		switch {
		case errors.As(err, &rpcErr):
			b, _ := json.Marshal(rpcErr)
			return rawjson.ReplaceField(out, "error", b)
		case err != nil:
			return nil, err
		}
		if res, err = rawjson.ReplaceReservedMeta(res, nil); err != nil {
			return nil, err
		}
		return rawjson.ReplaceField(out, "result", a.Export(res))
	case "tasks/cancel":
		_, err := a.Conn.Call(ctx, "tasks/cancel", byID)
		a.endHeld(id)
		if err != nil {
			return nil, err
		}
		return json.RawMessage(`{"resultType":"complete"}`), nil
	case "tasks/update":
		return a.update(id, forward)
	}
	return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "method %q is not one of the tasks extension's methods", method)
}
