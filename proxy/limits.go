package proxy

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/mcptrunk/mcptrunk/internal/limits"
	"github.com/mcptrunk/mcptrunk/internal/logkey"
	"github.com/mcptrunk/mcptrunk/naming"
	"github.com/mcptrunk/mcptrunk/proxy/catalog"
)

// limited counts a request routed to a server against trunk.limits, by the
// subject of the session it came from, and reports whether a rule refused
// it, with the answer: a tools/call gets a tool error the model reads, any
// other request a JSON-RPC error whose data says when to retry (the HTTP
// side turns either into Retry-After). Counted are the requests that ask
// a server for something: tools/call, prompts/get, resources/read and
// resources/subscribe; not the lists, nor what continues or undoes one
// (tasks/*, resources/unsubscribe), nor the trunk's own tools (whose
// call_tool and read_resource count as the request they stand for:
// ownTools). A check the shared store could not make refuses the request
// (or lets it through, as trunk.state.onUnavailable says) naming the
// store: a tools/call with a tool error, any other request with an
// error of jsonrpc.CodeUnavailable.
func (t *Trunk) limited(ctx context.Context, rq request, method string, params json.RawMessage) (res json.RawMessage, refused bool, err error) {
	switch method {
	case "tools/call", "prompts/get", "resources/read", "resources/subscribe":
	default:
		return nil, false, nil
	}
	if !t.limiter.Rules() {
		return nil, false, nil
	}
	s := rq.session
	server, item := t.describe(s, method, params)
	if server == "" || server == naming.TrunkServer {
		return nil, false, nil
	}
	view := rq.view(rq.st.catalog())
	if view.Restricted() && !viewAdmits(view, method, server, item) {
		return nil, false, nil // refused as a missing item is, uncounted: no answer tells a hidden item is there
	}
	req := limits.Request{Server: server}
	if s != nil {
		req.Subject = s.subject
	}
	if method == "tools/call" {
		req.Tool = item
		if raw, ok := view.Tools[server][item]; ok {
			req.Tool = raw // the tool's own name at its server
		}
	}
	r, refused, err := t.limiter.Allow(ctx, req)
	var unavailable *limits.UnavailableError
	if errors.As(err, &unavailable) {
		t.logger.Warn("a limit could not be checked", "limit", unavailable.Limit, logkey.Server, server, "method", method,
			"subject", logkey.Clip(req.Subject), "allowed", unavailable.Allowed, "error", unavailable.Err)
	}
	switch {
	case !refused:
		return nil, false, nil
	case unavailable != nil && method == "tools/call":
		return unavailable.ToolResult(), true, nil
	case unavailable != nil:
		return nil, true, unavailable.RPCError()
	case err != nil:
		return nil, true, err // the request's context ended
	}
	t.logger.Info("request refused by a limit", "limit", r.Limit, logkey.Server, server, "method", method, "subject", logkey.Clip(req.Subject), "retryAfter", r.RetryAfter)
	if method == "tools/call" {
		return r.ToolResult(), true, nil
	}
	return nil, true, r.Error()
}

// viewAdmits reports whether a caller's view holds what a request names:
// a tool or prompt by its exported name, a resource by its URI.
func viewAdmits(view *catalog.Catalog, method, server, item string) bool {
	switch method {
	case "tools/call":
		_, ok := view.Tools[server][item]
		return ok
	case "prompts/get":
		_, ok := view.Prompts[server][item]
		return ok
	case "resources/read", "resources/subscribe":
		_, _, err := admitURI(view, "resource", item)
		return err == nil
	}
	return true
}
