package proxy

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/proxy/catalog"
	"github.com/mcptrunk/mcptrunk/proxy/tasks"
	"github.com/mcptrunk/mcptrunk/proxy/translate"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// The trunk's side of tasks (proxy/tasks holds the rest): the tasks methods
// a host calls route by the id alone (translate.TaskIDs), a task-required
// tool is run as a task for a host that did not ask for one, and a status
// notification reaches the session that created the task.

// taskBinding is what the task ids of session s are bound to
// (tasks.Binding); "" on stdio (one host per process).
func taskBinding(s *Session) string {
	if s == nil {
		return ""
	}
	return tasks.Binding(s.perRequest, s.id, s.subject)
}

// handleTasks answers the tasks methods, which exist for a host only when
// some server behind the trunk offers tasks (and the trunk declares them).
func (t *Trunk) handleTasks(ctx context.Context, rq request, method string, params json.RawMessage) (json.RawMessage, error) {
	t.waitSettled(ctx)
	view := rq.view(rq.st.catalog()) // tasks exist for a caller when a server it sees offers them, as initialize declares
	if !slices.ContainsFunc(t.clients(), func(c *upstream.Client) bool {
		return view.Shows(c.Name()) && tasks.OffersAny(c.Init().RawCapabilities)
	}) {
		return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "method %q is not supported: no server behind mcptrunk offers tasks", method)
	}
	if err := tasks.StatelessGate(method, rq.HostRequest); err != nil {
		return nil, err
	}
	switch method {
	case "tasks/list":
		return t.listTasks(ctx, rq.session) // 2025-11-25 only: the extension has no list
	case "tasks/result":
		return t.bounded(rq.st, method, params).of(t.routeTask(ctx, rq, method, params))
	}
	return t.routeTask(ctx, rq, method, params)
}

// routeTask forwards tasks/get, tasks/result, tasks/cancel and (at
// 2026-07-28) tasks/update to the server the host's task id names, with the
// server's own id (tasks.Route: in the server's model), and gives the
// answer back with the trunk's id in it and, where a result is inlined
// (tasks/get of a finished 2026-07-28 task), its names and URIs exported as
// a tools/call result's are.
func (t *Trunk) routeTask(ctx context.Context, rq request, method string, params json.RawMessage) (json.RawMessage, error) {
	taskID, err := translate.RequiredString(method, params, "taskId", "the task's id")
	if err != nil {
		return nil, err
	}
	server, upID, err := t.taskIDs.Open(taskBinding(rq.session), taskID)
	if err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "%s: %v", method, err)
	}
	c, _, err := t.owner(ctx, rq, server, "task", taskID, params)
	if err != nil {
		return nil, err
	}
	forward, err := rawjson.ReplaceString(params, "taskId", upID)
	if err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "%s: %v", method, err)
	}
	r := tasks.Route{Follower: t.follower(rq.hostRequest, c), ServerCaps: c.Init().RawCapabilities, Issue: t.sessionTaskIDs(rq.session, server), Parking: t.parked, Host: rq.HostRequest,
		Timeout: c.Spec().Timeouts.Call.D(), Export: func(res json.RawMessage) json.RawMessage { return exportToolResult(rq.st.catalog(), server, res) }}
	return r.Answer(ctx, t.life, method, forward, rq.Stateless())
}

// exportToolResult is a tool result of server's as hosts get it, its
// names exported as in cat.
func exportToolResult(cat *catalog.Catalog, server string, res json.RawMessage) json.RawMessage {
	if cat.Unprefixed(server) {
		return res
	}
	return catalog.NamespaceToolResult(server, res)
}

// watchTask has the server of the task the host of request hr knows as id
// report its status on a listen of the trunk's (translate.ListenSession).
func (t *Trunk) watchTask(ctx context.Context, hr hostRequest, id string) (func(), <-chan error, error) {
	if err := tasks.StatelessGate(protocol.MethodListen, hr.HostRequest); err != nil {
		return nil, nil, err
	}
	server, upID, err := t.taskIDs.Open(taskBinding(hr.session), id)
	if err != nil {
		return nil, nil, err
	}
	c, _, err := t.owner(ctx, request{hr, t.state.Load()}, server, "task", id, nil)
	if err != nil {
		return nil, nil, err
	}
	return tasks.Listen(ctx, hr.server(c), upID)
}

// sessionTaskIDs turns server's task ids into the ids session s gets.
func (t *Trunk) sessionTaskIDs(s *Session, server string) func(string) string {
	return func(id string) string { return t.taskIDs.Issue(taskBinding(s), server, id) }
}

// taskCreated rewrites a tools/call result that is a task to carry the
// trunk's id for session s, and records s as the task's owner for its
// status notifications.
func (t *Trunk) taskCreated(ctx context.Context, s *Session, server string, res json.RawMessage) json.RawMessage {
	if tasks.IsCreated(res) {
		t.taskLog.Created(ctx, server, res, false)
		// 2026-07-28: the task is the result, its id at the top; its status
		// comes by tasks/get, or on a listen that names it (watchTask).
		return tasks.RewriteID(res, t.sessionTaskIDs(s, server))
	}
	if !rawjson.HasField(res, "task") {
		return res // the usual answer: no task, and no closure to make
	}
	t.taskLog.Created(ctx, server, res, false)
	out, id := tasks.Created(res, t.sessionTaskIDs(s, server))
	if id != "" && s != nil {
		t.hosts.tasks.Own(server, id, s)
	}
	return out
}

// listTasks answers tasks/list (tasks.ListAll). When sessions share the
// servers (serve --http), a session is shown only the tasks it created: a
// server lists the tasks of its one client, every session's.
func (t *Trunk) listTasks(ctx context.Context, session *Session) (json.RawMessage, error) {
	return tasks.ListAll(ctx, t.clients(), func(server string) func(string) string { return t.sessionTaskIDs(session, server) },
		func(server, id string) bool {
			owner, ok := t.hosts.tasks.Owner(server, id)
			return !t.hosts.shared.Load() || session == nil || ok && owner == session
		}, func(server string) []string { return t.hosts.tasks.IDs(server, session) }, t.logger)
}

// driveTask runs a call of c's tool that is not Direct (tasks.Call), all of it the session's
// call on c (a 2025 server's requests during it find the session).
func (t *Trunk) driveTask(ctx context.Context, rq request, c *upstream.Client, how tasks.Mode, forward json.RawMessage) (json.RawMessage, error) {
	hr := rq.hostRequest
	defer t.hosts.began(hr.session, c.Name(), hr.id)()
	call := tasks.Call{How: how, Follower: t.follower(hr, c), Host: hr.HostRequest, Forward: forward, Timeout: c.Spec().Timeouts.Call.D(), Life: t.life,
		Send: func(ctx context.Context, params json.RawMessage, withExtension bool) (json.RawMessage, error) {
			sent := rq
			if withExtension {
				sent.calls.Caps = tasks.WithExtension(hr.ForwardedCaps())
			}
			res, err := t.callUpstream(ctx, sent, c, "tools/call", params)
			// driven: the trunk runs it (not the host's own task, translated)
			t.taskLog.Created(ctx, c.Name(), res, how == tasks.AsTask2025 || how == tasks.AsExtensionTask)
			return res, err
		},
		Park: func(ctx context.Context, task func(context.Context, translate.AskHost) (json.RawMessage, error)) (json.RawMessage, error) {
			return t.parked.Call(ctx, translate.Parked{Upstream: hr.server(c), Run: task, Timeout: c.Spec().Timeouts.Call.D(), Host: hr.HostRequest, Caller: taskBinding(hr.session), Method: "tools/call", Params: forward})
		},
		Abandoned: func(err error) {
			t.logger.Warn("a task the trunk gave up on is still running", "server", c.Name(), "error", err)
		},
		Created: func(id string, poll time.Duration) { // the host's from now; its status goes to the host as a 2025-11-25 server's would
			if s := hr.session; s != nil {
				t.hosts.tasks.Own(c.Name(), id, s)
				owned := func() bool { return t.hosts.tasks.Owns(c.Name(), id, s) }
				t.workers.Go(func() {
					tasks.Watch(t.life, t.taskLog.Watch(c.Name(), c), c.Name(), id, poll, owned, func(server string, p json.RawMessage) { t.taskStatus(server, tasks.StatusMethod, p) })
				})
			}
		}}
	return call.Run(ctx)
}

// follower follows c's tasks for the session of request hr, their input
// requests put to it.
func (t *Trunk) follower(hr hostRequest, c *upstream.Client) tasks.Follower {
	return tasks.Follower{Conn: t.taskLog.Watch(c.Name(), hr.server(c)), Server: c.Name(), Can: hr.Can,
		Ask: func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
			return t.askSession(ctx, hr.session, compactID(hr.id), c.Name(), method, params)
		}}
}

// taskStatus delivers a server's notifications/tasks/status to the session
// that created the task, with the id that session knows it by, and its
// notifications/tasks (2026-07-28) to each stateless session's listens that
// named the task (translate.Listens.Route), with that session's id for it; a
// task no one asked for is announced to no one.
func (t *Trunk) taskStatus(server, method string, params json.RawMessage) {
	id, _ := rawjson.StringField(params, "taskId")
	t.taskLog.Heard(server, id, tasks.StatusMethod, params, nil)
	if method == tasks.NotificationMethod {
		params = tasks.Inlined(params, func(inner json.RawMessage) json.RawMessage { return exportToolResult(t.snapshot(), server, inner) })
		for _, s := range t.hosts.all() {
			if !s.sees(server) {
				continue
			}
			out, err := rawjson.ReplaceString(params, "taskId", t.taskIDs.Issue(taskBinding(s), server, id))
			if err == nil && s.stateless.Load() {
				err = s.Notify(method, out)
			}
			if err != nil {
				t.notifyFailed(server, method, err)
			}
		}
		return
	}
	s, ok := t.hosts.tasks.Owner(server, id)
	if !ok {
		t.logger.Debug("status of a task no session created", "server", server)
		return
	}
	out, err := rawjson.ReplaceString(params, "taskId", t.taskIDs.Issue(s.id, server, id))
	if err != nil {
		return
	}
	if err := s.Notify(tasks.StatusMethod, out); err != nil {
		t.notifyFailed(server, tasks.StatusMethod, err)
	}
}
