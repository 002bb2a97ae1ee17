// Package outgoing lets a tracer follow, from a host request's context,
// each request a server Client sends on that request's behalf.
//
// The context carries the Observer because it is the trace: it observes
// the requests and adds the W3C trace context to their _meta, and decides
// nothing else about them (what a stateless server is told of the host
// request is upstream.CallOptions, an argument). A request the trunk sends
// on its own (a ping, a re-list) has none. A leaf: tracing imports it, not
// upstream.
package outgoing

import (
	"context"
	"encoding/json"
)

// Request is what an Observer learns of a request a Client sends.
type Request struct {
	Server, Method string
	// Params as the trunk is about to send them (before the _meta of the
	// revision is set). An observer must not keep or change them.
	Params json.RawMessage
	// Revision is the connection's protocol revision, Transport the
	// config's type (stdio, http, sse).
	Revision, Transport string
}

// Observer is told of each request a Client sends with a ctx that carries
// it. It returns _meta keys to add to the request (the trace context:
// each replaces a key of the same name the params have, such as the
// host's own traceparent, which names the host's span and not the
// trunk's; values must be valid JSON and no key reserved by the wire) and
// a function that runs once with the answer.
type Observer func(ctx context.Context, r Request) (meta map[string]json.RawMessage, end func(result json.RawMessage, err error))

type observerKey struct{}

// WithObserver returns ctx carrying o for every request sent upstream with
// it (or a ctx derived from it).
func WithObserver(ctx context.Context, o Observer) context.Context {
	return context.WithValue(ctx, observerKey{}, o)
}

// ObserverFrom is the Observer ctx carries, nil when none.
func ObserverFrom(ctx context.Context) Observer {
	o, _ := ctx.Value(observerKey{}).(Observer)
	return o
}
