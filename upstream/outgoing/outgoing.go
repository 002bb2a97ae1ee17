// Package outgoing is what a host's request carries, in its context, to the
// requests a server Client sends on its behalf: an observer (a tracer) to
// be told of each one, _meta keys to add to them (the W3C trace context),
// and, for a stateless server, the host's client capabilities and log
// level. They travel in the ctx so that nothing in between (routing, the
// Fleet, wakes, timeouts) knows of them, and a request the trunk sends on
// its own (a ping, a re-list) has none. A leaf: tracing imports it, not
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
// it. It returns the ctx to send the request with (one carrying WithMeta,
// say) and a function that runs once with the answer.
type Observer func(ctx context.Context, r Request) (context.Context, func(result json.RawMessage, err error))

type (
	observerKey struct{}
	metaKey     struct{}
	capsKey     struct{}
	levelKey    struct{}
)

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

// WithMeta returns ctx carrying _meta keys for the requests sent with it:
// each replaces a key of the same name the params already have (the host's
// own traceparent, say, which names the host's span and not the trunk's).
// Values must be valid JSON; reserved keys are the wire's own and are not
// allowed here.
func WithMeta(ctx context.Context, meta map[string]json.RawMessage) context.Context {
	return context.WithValue(ctx, metaKey{}, meta)
}

// MetaFrom is the _meta WithMeta put in ctx, nil when none.
func MetaFrom(ctx context.Context) map[string]json.RawMessage {
	m, _ := ctx.Value(metaKey{}).(map[string]json.RawMessage)
	return m
}

// WithHostCapabilities returns ctx carrying the client capabilities of the
// host request it serves. A stateless server is told, in each request, what
// its client can be asked during it; the trunk can be asked what the host
// that sent this very request can do, which may be less (or more) than the
// capabilities the servers were started with.
func WithHostCapabilities(ctx context.Context, caps json.RawMessage) context.Context {
	return context.WithValue(ctx, capsKey{}, caps)
}

// HostCapabilities is what WithHostCapabilities put in ctx, nil when none.
func HostCapabilities(ctx context.Context) json.RawMessage {
	caps, _ := ctx.Value(capsKey{}).(json.RawMessage)
	return caps
}

// WithLogLevel returns ctx carrying the log level of the host request it
// serves, for a stateless server: that request then asks for exactly this
// level ("" asks for no log messages), whatever logging/setLevel set. A
// stateless host names its level in each request, and a server logs only
// for requests that ask, so the trunk must not ask on a request's behalf
// for more than its host did.
func WithLogLevel(ctx context.Context, level string) context.Context {
	return context.WithValue(ctx, levelKey{}, level)
}

// LogLevel is what WithLogLevel put in ctx; ok is false when nothing was.
func LogLevel(ctx context.Context) (level string, ok bool) {
	level, ok = ctx.Value(levelKey{}).(string)
	return level, ok
}
