package proxy

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/pin"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/naming"
	"github.com/mcptrunk/mcptrunk/proxy/access"
	"github.com/mcptrunk/mcptrunk/proxy/catalog"
	"github.com/mcptrunk/mcptrunk/proxy/results"
	"github.com/mcptrunk/mcptrunk/proxy/skills"
	"github.com/mcptrunk/mcptrunk/proxy/tasks"
	"github.com/mcptrunk/mcptrunk/proxy/translate"
	"github.com/mcptrunk/mcptrunk/proxy/trunktools"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// Handle answers one request that concerns the upstreams and comes from no
// host connection (the trunk's own, the one-shot commands'): a 2025
// request with no capabilities and no session (handle).
func (t *Trunk) Handle(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return t.handle(ctx, hostRequest{}, method, params)
}

// handle answers one request of host hr that concerns the upstreams: the
// four lists, and every request routed to an owner. Results come back as
// the upstream sent them, apart from the names and URIs the trunk rewrites.
// The request is handled under the generation in force when it begins
// (state), from start to end, whatever reload happens meanwhile; its facts
// go down as a value (request), never through ctx.
func (t *Trunk) handle(ctx context.Context, hr hostRequest, method string, params json.RawMessage) (json.RawMessage, error) {
	rq := request{hr, t.state.Load()}
	if res, refused, err := t.limited(ctx, rq, method, params); refused {
		return res, err
	}
	switch method {
	case "tools/list":
		return t.list(ctx, rq, catalog.ListTools, params)
	case "prompts/list":
		return t.list(ctx, rq, catalog.ListPrompts, params)
	case "resources/list":
		return t.list(ctx, rq, catalog.ListResources, params)
	case "resources/templates/list":
		return t.list(ctx, rq, catalog.ListTemplates, params)
	case "tools/call":
		return t.bounded(rq.st, method, params).of(t.routeNamed(ctx, rq, method, params, "tool"))
	case "prompts/get":
		return t.bounded(rq.st, method, params).of(t.routeNamed(ctx, rq, method, params, "prompt"))
	case "resources/read", skills.GetMethod, skills.DirReadMethod:
		return t.bounded(rq.st, method, params).of(t.routeResource(ctx, rq, method, params, true))
	case skills.ListMethod:
		t.waitSettled(ctx)
		return t.bounded(rq.st, method, params).of(skills.ListOf(ctx, t.clients(), rq.calls, rq.view(rq.st.catalog()).Admits, rq.st.pins, t.logger))
	case "resources/subscribe", "resources/unsubscribe":
		return t.routeResource(ctx, rq, method, params, false)
	case "completion/complete":
		return t.routeCompletion(ctx, rq, params)
	case "tasks/get", "tasks/cancel", "tasks/result", "tasks/list", "tasks/update":
		return t.handleTasks(ctx, rq, method, params)
	case "logging/setLevel":
		return t.setLevel(ctx, params)
	case "ping":
		return json.RawMessage(`{}`), nil
	}
	return nil, unsupported(method)
}

// unsupported is the answer to a method the trunk does not have.
func unsupported(method string) error {
	return jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "method %q is not supported by mcptrunk", method)
}

func (t *Trunk) list(ctx context.Context, rq request, l catalog.List, params json.RawMessage) (json.RawMessage, error) {
	t.waitSettled(ctx)
	var cursor string
	if len(params) > 0 {
		var err error
		if cursor, err = rawjson.StringField(params, "cursor"); err != nil {
			return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "%s: %v", catalog.Specs[l].Method, err)
		}
	}
	cat := rq.st.catalog()
	t.served(l, cat)
	cat = rq.view(cat)
	if cursor == "" {
		return cat.FirstPage(l, t.pageSize)
	}
	return cat.Page(l, cursor, t.pageSize)
}

// routeNamed routes tools/call and prompts/get: the catalog finds the
// owner (the exported name split by the scheme, or looked up for an
// unprefixed server), the owner's own map gives the upstream name, and the
// params go on with only the name replaced.
func (t *Trunk) routeNamed(ctx context.Context, rq request, method string, params json.RawMessage, kind string) (json.RawMessage, error) {
	name, err := translate.RequiredName(method, params, kind)
	if err != nil {
		return nil, err
	}
	if err := translate.OptionalObject(method, params, "arguments"); err != nil {
		return nil, err
	}
	t.waitSettled(ctx)
	cat := rq.view(rq.st.catalog())
	l, routes := catalog.ListTools, cat.Tools
	if kind == "prompt" {
		l, routes = catalog.ListPrompts, cat.Prompts
	}
	if kind == "tool" {
		if name, err = cat.AppTool(name); err != nil {
			return nil, err
		}
	}
	server, ok := cat.NameOwner(l, name)
	if !ok {
		return nil, cat.UnknownName(kind, name)
	}
	if c, ok := t.Fleet().Client(server); ok && c.AwaitRestart(ctx) {
		// Its names were withdrawn while it restarted: look again.
		cat = rq.view(rq.st.catalog())
		routes = cat.Tools
		if kind == "prompt" {
			routes = cat.Prompts
		}
	}
	raw, known := routes[server][name]
	if !known && cat.Restricted() {
		return nil, cat.UnknownName(kind, name) // forbidden, filtered or missing: one answer
	}
	if server == naming.TrunkServer && kind == "tool" && known {
		return trunktools.Call(ctx, ownTools{t, rq}, raw, params)
	}
	c, woke, err := t.owner(ctx, rq, server, kind, name, params)
	if err != nil {
		return nil, err
	}
	if woke {
		// The server's live catalog replaced the cached one: the name may
		// be gone, or another now.
		wasKnown := known
		cat = rq.view(rq.st.catalog())
		routes = cat.Tools
		if kind == "prompt" {
			routes = cat.Prompts
		}
		raw, known = routes[server][name]
		if wasKnown && !known {
			return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "unknown %s %q: server %q no longer offers it (it was in the catalog cached from its last start; the host has been told the list changed)", kind, name, server)
		}
	}
	if !known {
		if why, ok := cat.WithheldWhy(server, kind, name); ok {
			return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "%s", why)
		}
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "%s", cat.NotExported(c, rq.st.cfg.Trunk.ReadOnly, kind, name))
	}
	forward, err := rawjson.ReplaceString(params, "name", raw)
	if err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "%s: %v", method, err)
	}
	// The config's defaults and fixed arguments: the server gets them,
	// the model never gives a fixed one.
	shape := rq.overrides(server, c.Spec().Overrides)
	overrides := shape.Tools[raw].Arguments
	if kind == "prompt" {
		overrides = shape.Prompts[raw].Arguments
	}
	if forward, err = catalog.Arguments(kind, name, overrides, forward); err != nil {
		return nil, err
	}
	call := t.callUpstream
	if kind == "tool" {
		tools := func() []upstream.Item { return c.Catalog().Tools }
		if how := tasks.ModeOfCall(c.Init().RawCapabilities, rq.HostRequest, tools, raw, forward); how != tasks.Direct {
			call = func(ctx context.Context, rq request, c *upstream.Client, _ string, forward json.RawMessage) (json.RawMessage, error) {
				return t.driveTask(ctx, rq, c, how, forward)
			}
		}
	}
	if kind == "tool" && c.Spec().IdleTimeout.D() > 0 {
		// Its idle timeout must not stop the server between the answer
		// and the record of a task it created (taskCreated).
		defer t.taskLog.Expect(server)()
	}
	res, err := call(ctx, rq, c, method, forward)
	if err != nil {
		return nil, err
	}
	if kind == "prompt" {
		if cat.Unprefixed(server) {
			return res, nil
		}
		return catalog.NamespacePromptResult(server, res), nil
	}
	res = t.taskCreated(ctx, rq.session, server, res)
	if !cat.Unprefixed(server) {
		res = catalog.NamespaceToolResult(server, res)
	}
	return t.fitResult(rq, cat, c, raw, res), nil
}

// owner finds the server an exported name points at, with an error naming
// the item when the server is unknown or not available. A sleeping server
// is started first (wake); woke says so, since its catalog may then differ
// from the cached one the name was found in.
func (t *Trunk) owner(ctx context.Context, rq request, server, kind, item string, params json.RawMessage) (_ *upstream.Client, woke bool, _ error) {
	c, ok := t.Fleet().Client(server)
	if !ok {
		return nil, false, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "unknown %s %q: no server %q is configured%s", kind, item, server, rq.st.catalog().DidYouMean(kind, item))
	}
	if own, err := t.ownInstance(ctx, rq.hostRequest, c); err != nil {
		return nil, false, err
	} else if own != nil {
		c = own // the session's or the caller's own (private.go)
	}
	c.AwaitRestart(ctx) // a request waits for a server that is restarting
	state, err := c.State()
	if state != upstream.StateReady && c.Listed() {
		if err := t.wake(ctx, c, params); err != nil {
			return nil, false, jsonrpc.Errorf(jsonrpc.CodeUnavailable, "%s %q: server %q could not be started: %v", kind, item, server, err)
		}
		return c, true, nil
	}
	if state != upstream.StateReady {
		msg := fmt.Sprintf("%s %q: server %q is %s", kind, item, server, state)
		if err != nil {
			msg += ": " + err.Error()
		}
		return nil, false, jsonrpc.Errorf(jsonrpc.CodeUnavailable, "%s", msg)
	}
	return c, false, nil
}

// routeResource routes requests that carry a resource URI. For reads, the
// URIs in the result are rewritten too, so the host can read them back.
func (t *Trunk) routeResource(ctx context.Context, rq request, method string, params json.RawMessage, read bool) (json.RawMessage, error) {
	uri, err := translate.RequiredString(method, params, "uri", "the resource's URI")
	if err != nil {
		return nil, err
	}
	if server, raw, ok := naming.SplitResourceURI(uri); ok && server == naming.TrunkServer && read {
		if id, page, kept, err := results.Parse(raw); kept && method == "resources/read" {
			return t.readKept(rq, uri, id, page, err) // the caller's own, whatever its view
		}
		if cat := rq.view(rq.st.catalog()); !cat.Admits("resource", server, raw, uri) {
			return nil, cat.Hidden("resource", uri)
		}
		return trunktools.ReadResource(ctx, ownTools{t, rq}, uri) // without waiting for the servers
	}
	t.waitSettled(ctx)
	cat := rq.view(rq.st.catalog())
	server, raw, err := admitURI(cat, skills.KindOf(method), uri)
	if err != nil {
		return nil, err
	}
	c, _, err := t.owner(ctx, rq, server, "resource", uri, params)
	if err != nil {
		return nil, err
	}
	if why, ok := rq.st.catalog().Withheld[server][pin.Resources][raw]; ok {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "%s", why)
	}
	if !catalog.ResourceAllowed(c.Spec().Resources, raw, c.Catalog().Templates) {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "resource %q is not exported: server %q's resources filter excludes it", uri, server)
	}
	forward, err := rawjson.ReplaceString(params, "uri", raw)
	if err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "%s: %v", method, err)
	}
	conn := c.Status().Since // the connection the request goes to
	var res json.RawMessage
	if read {
		res, err = t.callUpstream(ctx, rq, c, method, forward)
	} else {
		res, err = c.Call(ctx, method, forward)
	}
	if err != nil {
		return nil, err
	}
	if !read {
		// Kept for servers that restart: they are subscribed again.
		t.toResync.Subscribed(server, raw, method == "resources/subscribe", conn)
		return res, nil
	}
	if err := rq.st.pins.CheckRead(method, server, raw, res); err != nil {
		return nil, err
	}
	switch {
	case cat.Unprefixed(server):
		return res, nil
	case method != "resources/read":
		return catalog.NamespaceSkillResult(method, server, res), nil
	}
	return catalog.NamespaceReadResult(server, res), nil
}

// admitURI finds the server of a URI (a resource's, a skill's) in cat, a
// caller's view: a URI the view does not admit gets the answer a URI no
// server has gets (catalog.Hidden), whoever else may use it.
func admitURI(cat *catalog.Catalog, kind, uri string) (server, raw string, err error) {
	server, raw, err = cat.URIOwner(uri)
	if cat.Restricted() && (err != nil || !cat.Admits(kind, server, raw, uri)) {
		return "", "", cat.Hidden(kind, uri)
	}
	return server, raw, err
}

// routeCompletion routes completion/complete by its reference: a prompt's
// exported name or a template's namespaced URI.
func (t *Trunk) routeCompletion(ctx context.Context, rq request, params json.RawMessage) (json.RawMessage, error) {
	start, end, found, err := rawjson.FieldSpan(params, "ref")
	if err != nil || !found {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "completion/complete: params need a ref")
	}
	ref := params[start:end]
	t.waitSettled(ctx)
	cat := rq.view(rq.st.catalog())
	server, field, value, err := cat.CompletionTarget(ref)
	if exported, _ := rawjson.StringField(ref, "uri"); err == nil && field == "uri" && !cat.Admits("template", server, value, exported) {
		err = fmt.Errorf("unknown resource %q", exported)
	}
	if err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "completion/complete: %v", err)
	}
	c, _, err := t.owner(ctx, rq, server, "completion reference", value, params)
	if err != nil {
		return nil, err
	}
	newRef, err := rawjson.ReplaceString(ref, field, value)
	if err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "completion/complete: %v", err)
	}
	forward, err := rawjson.ReplaceField(params, "ref", newRef)
	if err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "completion/complete: %v", err)
	}
	return rq.server(c).Call(ctx, "completion/complete", forward)
}

// setLevel passes the host's log level to every ready server that logs.
// Hosts send it right after initialize, while the upstreams are still
// starting, so it first waits for them as the first list request does: a
// server that is not ready yet would never hear of the level.
func (t *Trunk) setLevel(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	t.toResync.SetLevel(params) // for servers that connect later or again
	t.waitSettled(ctx)
	for _, c := range t.clients() {
		if state, _ := c.State(); state != upstream.StateReady || !c.Init().Capabilities.Logging {
			continue
		}
		if !t.toResync.ClaimLevel(resyncConn(c)) {
			continue // resync told this connection the level already
		}
		if _, err := c.Call(ctx, "logging/setLevel", params); err != nil {
			t.logger.Warn("passing the log level on failed", "server", c.Name(), "error", err)
		}
	}
	return json.RawMessage(`{}`), nil
}

// waitSettled is WaitSettled with a shortcut for the usual case on the hot
// path: every server has settled, so there is nothing to wait for (and no
// timer to start, which WaitSettled does for every request during the first
// trunk.startupWait).
func (t *Trunk) waitSettled(ctx context.Context) {
	select {
	case <-t.started:
		select {
		case <-t.fleet.Settled():
			return
		default:
		}
	default:
	}
	t.WaitSettled(ctx)
}

// ToolHeaderParams returns, for an exported tool in the view of the caller
// who (its Subject, Claims and Profile), under the names the host whose
// clientInfo name is client is offered (Trunk.hostBudget), the arguments
// its input schema mirrors in HTTP headers at the stateless revision
// (catalog.Catalog.ToolHeaderParams), for the HTTP downstream: nil for a
// tool hidden from the caller, as for one that does not exist, so that
// the header check answers both alike.
func (t *Trunk) ToolHeaderParams(name, client string, who *SessionOptions) map[string]string {
	st := t.state.Load()
	cat := st.catalog().Fitted(t.hostBudget(client))
	mirrored := cat.ToolHeaderParams(name)
	if mirrored == nil {
		return nil // the common case, whoever asks
	}
	caller := access.NewCaller(who.Subject, who.Claims, who.Profile)
	return st.access.View(cat, caller).ToolHeaderParams(name)
}
