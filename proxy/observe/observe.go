// Package observe is the seam every host request passes: the Observer
// types that audit logs, metrics and traces implement, and the status
// snapshot a metrics collector reads. It is a leaf so that those packages
// need not import the trunk to hang on it.
package observe

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
)

// Observer is told about every request the trunk answers for its host: the
// one seam that audit logs, metrics and traces hang on, so that routing
// knows nothing of them. Begin runs before the request is handled and may
// return a context for it (a tracer's span); the function it returns runs
// once with the outcome. Both run on the request's goroutine and must be
// quick: the request waits for them.
type Observer interface {
	Begin(ctx context.Context, r Request) (context.Context, func(Outcome))
}

// Request is what an Observer learns of a host request before it is
// handled.
type Request struct {
	Method string
	// Server and Item name what the request is for, when it names one:
	// the server an exported tool or prompt name or a resource URI points
	// at, and that name or URI as the host sent it. Empty otherwise.
	Server, Item string
	// Revision is the protocol revision of the request, Client the host's
	// clientInfo name when known.
	Revision, Client string
	// Transport is how the host reached the trunk: config.TransportStdio
	// for the host on the trunk's stdin and stdout, config.TransportHTTP
	// for one of serve --http.
	Transport config.Transport
	// Session is the id of the host session the request came on: the
	// session's id on the HTTP downstream (SessionOptions.ID); empty for
	// the stdio host, and for a stateless request over HTTP, which has no
	// session.
	Session string
	// Subject names the caller an access token proved (serve --http with
	// trunk.http.auth); empty otherwise. Never the token.
	Subject string
	// ID is the request's JSON-RPC id as the host wrote it (a JSON string
	// or number). An observer must not keep or change it.
	ID json.RawMessage
	// Params are the request's params as the host sent them. An observer
	// must not keep or change them.
	Params json.RawMessage
	// Run is the id of the code-mode run (mcp__trunk__run_code) whose
	// program made this tools/call on the caller's behalf; empty for a
	// request the host sent itself.
	Run string
}

// Outcome is how a host request ended.
type Outcome struct {
	Result json.RawMessage // nil on error
	Err    error
	// Forwarded says Err is a peer's own JSON-RPC error that the trunk
	// passed on as it came (jsonrpc.FromPeer): the answer of the server
	// the request was routed to, or, when the trunk asked the host for a
	// server's input on a call's behalf, the host's. False for an error
	// the trunk made itself, which may carry the same code: an unknown
	// name, the export policy, an item pinning withholds, bad params or
	// requestState (-32602), a server not running, a timeout.
	Forwarded bool
	// Continues is set for a retry that continues a call the trunk keeps
	// between rounds of input (a 2026-07-28 host's call to a 2025 server,
	// proxy/translate/mrtr_park.go): the context Begin returned for the call's first
	// round, which the upstream call runs under. A tracer links the
	// retry's span to the first round's with it. An observer may read its
	// values and must not keep it. Nil for any other request.
	Continues context.Context
	Duration  time.Duration
}

// Observers fans one Begin out to several observers, ending them in
// reverse order.
type Observers []Observer

// Begin begins r with every observer.
func (os Observers) Begin(ctx context.Context, r Request) (context.Context, func(Outcome)) {
	if len(os) == 0 {
		return ctx, func(Outcome) {}
	}
	ends := make([]func(Outcome), len(os))
	for i, o := range os {
		ctx, ends[i] = o.Begin(ctx, r)
	}
	return ctx, func(out Outcome) {
		for i := len(ends) - 1; i >= 0; i-- {
			ends[i](out)
		}
	}
}
