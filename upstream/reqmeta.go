package upstream

import (
	"context"
	"encoding/json"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
)

// What a host request's observer (a tracer) needs of the requests sent
// upstream on its behalf: to be told of each one, and to add _meta keys to
// it (the W3C trace context). Both travel in the host request's ctx, so
// that nothing in between (routing, the Fleet, wakes, timeouts) knows of
// them, and a request the trunk sends on its own (a ping, a re-list) has
// neither.

// OutgoingRequest is what a RequestObserver learns of a request a Client
// sends.
type OutgoingRequest struct {
	Server, Method string
	// Params as the trunk is about to send them (before the _meta of the
	// revision is set). An observer must not keep or change them.
	Params json.RawMessage
	// Revision is the connection's protocol revision, Transport the
	// config's type (stdio, http, sse).
	Revision, Transport string
}

// RequestObserver is told of each request a Client sends with a ctx that
// carries it. It returns the ctx to send the request with (one carrying
// WithRequestMeta, say) and a function that runs once with the answer.
type RequestObserver func(ctx context.Context, r OutgoingRequest) (context.Context, func(result json.RawMessage, err error))

type requestObserverKey struct{}

// WithRequestObserver returns ctx carrying o for every request sent
// upstream with it (or a ctx derived from it).
func WithRequestObserver(ctx context.Context, o RequestObserver) context.Context {
	return context.WithValue(ctx, requestObserverKey{}, o)
}

type requestMetaKey struct{}

// WithRequestMeta returns ctx carrying _meta keys for the requests sent
// with it: each replaces a key of the same name the params already have
// (the host's own traceparent, say, which names the host's span and not
// the trunk's). Values must be valid JSON; reserved keys are the wire's
// own and are not allowed here.
func WithRequestMeta(ctx context.Context, meta map[string]json.RawMessage) context.Context {
	return context.WithValue(ctx, requestMetaKey{}, meta)
}

// RequestMetaFrom is the _meta WithRequestMeta put in ctx, nil when none.
func RequestMetaFrom(ctx context.Context) map[string]json.RawMessage {
	m, _ := ctx.Value(requestMetaKey{}).(map[string]json.RawMessage)
	return m
}

// RequestObserverFrom is the RequestObserver ctx carries, nil when none.
func RequestObserverFrom(ctx context.Context) RequestObserver {
	o, _ := ctx.Value(requestObserverKey{}).(RequestObserver)
	return o
}

// observe tells ctx's RequestObserver, if any, of a request about to be
// sent; end is nil when there is none.
func (w *wire) observe(ctx context.Context, method string, params json.RawMessage) (context.Context, func(json.RawMessage, error)) {
	o := RequestObserverFrom(ctx)
	if o == nil {
		return ctx, nil
	}
	revision := protocol.Stateless
	if !w.stateless.Load() {
		w.c.mu.Lock()
		revision = w.c.init.ProtocolVersion
		w.c.mu.Unlock()
	}
	return o(ctx, OutgoingRequest{Server: w.c.id, Method: method, Params: params, Revision: revision, Transport: string(w.c.spec.Type)})
}

// legacyParams is stripMeta with ctx's request _meta set.
func (w *wire) legacyParams(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	extra := RequestMetaFrom(ctx)
	if len(extra) == 0 {
		return w.stripMeta(params)
	}
	out, err := rawjson.ReplaceReservedMeta(params, extra)
	if err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "server %q: params: %v", w.c.id, err)
	}
	return out, nil
}

// addRequestMeta adds ctx's request _meta to the stateless revision's.
func addRequestMeta(ctx context.Context, meta map[string]json.RawMessage) {
	for k, v := range RequestMetaFrom(ctx) {
		if _, reserved := meta[k]; !reserved {
			meta[k] = v
		}
	}
}
