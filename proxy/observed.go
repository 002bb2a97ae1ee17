package proxy

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/proxy/catalog"
	"github.com/mcptrunk/mcptrunk/proxy/observe"
)

// describe fills in what a request names: the exported name's or URI's
// server, as the catalog routes it (a name that names no server still has
// its item).
func (t *Trunk) describe(s *Session, method string, params json.RawMessage) (server, item string) {
	switch method {
	case "tools/call", "prompts/get":
		item, _ = rawjson.StringField(params, "name")
	case "resources/read", "resources/subscribe", "resources/unsubscribe":
		item, _ = rawjson.StringField(params, "uri")
	case "tasks/get", "tasks/result", "tasks/cancel", "tasks/update":
		// The task's id names its server to the session it was issued to.
		item, _ = rawjson.StringField(params, "taskId")
		server, _, _ = t.taskIDs.Open(taskBinding(s), item)
		return server, item
	default:
		return "", ""
	}
	st := t.state.Load()
	cat := st.catalog()
	if !cat.HasUnprefixed() {
		// Every server is namespaced, or no catalog is built yet: the
		// name says whose it is, in the scheme in force.
		cat = &catalog.Catalog{Scheme: st.policy().Scheme}
	}
	return cat.ServerOf(method, item), item
}

// transport is how the session's host reached the trunk: every session
// but the stdio host's is one of the HTTP downstream, and has an id or
// carries one stateless request (SessionOptions).
func (s *Session) transport() config.Transport {
	if s.id != "" || s.perRequest {
		return config.TransportHTTP
	}
	return config.TransportStdio
}

// observe runs handle, request req of session s, under the trunk's
// observers; with none it is handle.
func (s *Session) observe(ctx context.Context, req jsonrpc.Request, revision, client string, handle func(context.Context) (json.RawMessage, error)) (json.RawMessage, error) {
	t := s.trunk
	if len(t.observers) == 0 {
		return handle(ctx)
	}
	server, item := t.describe(s, req.Method, req.Params)
	r := observe.Request{Method: req.Method, Server: server, Item: item, Revision: revision, Client: client,
		Transport: s.transport(), Session: s.id, Subject: s.subject, ID: req.ID, Params: req.Params}
	return t.observed(ctx, r, handle)
}

// observeInRun runs handle, a tools/call with params that the code-mode
// run with id run makes within the request of ctx, under the trunk's
// observers as a request of the same caller, session and client, with the
// run's id and no JSON-RPC id of its own; with none it is handle.
func (s *Session) observeInRun(ctx context.Context, run string, params json.RawMessage, handle func(context.Context) (json.RawMessage, error)) (json.RawMessage, error) {
	t := s.trunk
	if len(t.observers) == 0 {
		return handle(ctx)
	}
	r := observe.RequestOf(ctx)
	r.Method, r.Params, r.Run = "tools/call", params, run
	r.Server, r.Item = t.describe(s, r.Method, params)
	return t.observed(ctx, r, handle)
}

// observed runs handle as the request r under the trunk's observers.
func (t *Trunk) observed(ctx context.Context, r observe.Request, handle func(context.Context) (json.RawMessage, error)) (json.RawMessage, error) {
	start := time.Now()
	ctx, end := t.observers.Begin(ctx, r)
	ctx, continues := observe.Handling(ctx, r)
	res, err := handle(ctx)
	end(observe.Outcome{Result: res, Err: err, Forwarded: jsonrpc.FromPeer(err), Continues: continues(), Duration: time.Since(start)})
	return res, err
}
