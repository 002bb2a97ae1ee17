package upstream

import (
	"context"
	"encoding/json"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/upstream/outgoing"
)

// observe tells ctx's outgoing.Observer, if any, of a request about to be
// sent; end is nil when there is none.
func (w *wire) observe(ctx context.Context, method string, params json.RawMessage) (context.Context, func(json.RawMessage, error)) {
	o := outgoing.ObserverFrom(ctx)
	if o == nil {
		return ctx, nil
	}
	revision := protocol.Stateless
	if !w.stateless.Load() {
		w.c.mu.Lock()
		revision = w.c.init.ProtocolVersion
		w.c.mu.Unlock()
	}
	return o(ctx, outgoing.Request{Server: w.c.id, Method: method, Params: params, Revision: revision, Transport: string(w.c.spec.Type)})
}

// legacyParams is stripMeta with ctx's request _meta set.
func (w *wire) legacyParams(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	extra := outgoing.MetaFrom(ctx)
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
	for k, v := range outgoing.MetaFrom(ctx) {
		if _, reserved := meta[k]; !reserved {
			meta[k] = v
		}
	}
}
