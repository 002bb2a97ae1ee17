package upstream

import (
	"context"
	"encoding/json"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/upstream/outgoing"
)

// CallOptions are the facts of the host request a call is made for that a
// server at the stateless revision is told in the call's _meta (one at an
// earlier revision learnt them at initialize and from logging/setLevel).
// The zero value is a request of the trunk's own.
type CallOptions struct {
	// Caps are the client capabilities of the host request: what the
	// server may ask during the call, which may be less (or more) than the
	// capabilities the Client was started with (Options.Capabilities,
	// told when Caps is nil).
	Caps json.RawMessage
	// Level, when LevelSet, is the log level the host request asked for
	// ("" for none), told instead of the one logging/setLevel set: a
	// stateless host names its level in each request, and the trunk must
	// not ask on a request's behalf for more than its host did.
	Level    string
	LevelSet bool
}

// Caller is a Client whose requests are all made for one host request,
// each told that request's CallOptions: what the code that serves a host
// request (translation, tasks) is handed in place of the Client.
type Caller struct {
	c    *Client
	opts CallOptions
}

// For is c calling for the host request opts describes.
func (c *Client) For(opts CallOptions) Caller { return Caller{c, opts} }

// Name is the server's name.
func (b Caller) Name() string { return b.c.id }

// Call is Client.callWith with the Caller's options.
func (b Caller) Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return b.c.callWith(ctx, b.opts, method, params)
}

// InputInResults reports whether the server asks for a call's input
// inside its results (input_required, answered by a retry: 2026-07-28)
// rather than with requests of its own during the call (2025), as its
// revision's adapter says: of its last handshake, or of the catalog cache
// while it sleeps.
func (b Caller) InputInResults() bool { return revisionOf(b.c.Init()).inputInResults() }

// ListenTasks is Client.listenTasks told the Caller's options.
func (b Caller) ListenTasks(ctx context.Context, ids []string) (honored []string, stop func(), ended <-chan error, _ error) {
	return b.c.listenTasks(ctx, b.opts, ids)
}

// observe tells ctx's outgoing.Observer, if any, of a request about to be
// sent; it returns the _meta the observer adds to the request, and end,
// nil when there is no observer.
func (w *wire) observe(ctx context.Context, rev revision, method string, params json.RawMessage) (map[string]json.RawMessage, func(json.RawMessage, error)) {
	o := outgoing.ObserverFrom(ctx)
	if o == nil {
		return nil, nil
	}
	return o(ctx, outgoing.Request{Server: w.c.id, Method: method, Params: params, Revision: rev.version(), Transport: string(w.c.spec.Type)})
}

// params2025 is stripMeta with the observer's _meta (extra) set.
func (w *wire) params2025(params json.RawMessage, extra map[string]json.RawMessage) (json.RawMessage, error) {
	if len(extra) == 0 {
		return w.stripMeta(params)
	}
	out, err := rawjson.ReplaceReservedMeta(params, extra)
	if err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "server %q: params: %v", w.c.id, err)
	}
	return out, nil
}

// addRequestMeta adds the observer's _meta (extra) to the stateless
// revision's, whose reserved keys it cannot replace.
func addRequestMeta(meta, extra map[string]json.RawMessage) {
	for k, v := range extra {
		if _, reserved := meta[k]; !reserved {
			meta[k] = v
		}
	}
}
