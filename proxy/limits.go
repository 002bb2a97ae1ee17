package proxy

import (
	"context"
	"encoding/json"

	"github.com/mcptrunk/mcptrunk/internal/limits"
	"github.com/mcptrunk/mcptrunk/internal/logkey"
	"github.com/mcptrunk/mcptrunk/naming"
)

// limited counts a request routed to a server against trunk.limits, by the
// subject of the session it came from, and reports whether a rule refused
// it, with the answer: a tools/call gets a tool error the model reads, any
// other request a JSON-RPC error whose data says when to retry (the HTTP
// side turns either into Retry-After). Requests to no server (the lists,
// ping) and to the trunk's own tools are not counted.
func (t *Trunk) limited(ctx context.Context, method string, params json.RawMessage) (res json.RawMessage, refused bool, err error) {
	if !t.limiter.Rules() {
		return nil, false, nil
	}
	s := hostRequestOf(ctx).session
	server, item := t.describe(s, method, params)
	if server == "" || server == naming.TrunkServer {
		return nil, false, nil
	}
	req := limits.Request{Server: server}
	if s != nil {
		req.Subject = s.subject
	}
	if method == "tools/call" {
		req.Tool = item
		if raw, ok := t.snapshot().Tools[server][item]; ok {
			req.Tool = raw // the tool's own name at its server
		}
	}
	r, refused := t.limiter.Allow(req)
	if !refused {
		return nil, false, nil
	}
	t.logger.Info("request refused by a limit", "limit", r.Limit, logkey.Server, server, "method", method, "subject", logkey.Clip(req.Subject), "retryAfter", r.RetryAfter)
	if method == "tools/call" {
		return r.ToolResult(), true, nil
	}
	return nil, true, r.Error()
}
