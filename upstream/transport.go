package upstream

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
)

// Transport is how a Client reaches its server: the one seam between the
// protocol logic in Client and the way bytes travel (a subprocess's stdio,
// streamable HTTP and SSE behind the same six methods, or whatever a
// Dialer returns, such as a server in the same process in tests). Params
// and results are raw JSON so nothing is lost in transit.
type Transport interface {
	// Call sends a request and waits for its response. A JSON-RPC error from
	// the server comes back as *jsonrpc.Error, unchanged.
	Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
	// CallWithin is Call bounded by d (none when d <= 0); the error when d
	// passes first is context.DeadlineExceeded. It is the call path of
	// every request the Client sends with its timeouts.call: a transport
	// over a jsonrpc.Conn bounds it with a pooled timer
	// (jsonrpc.Conn.CallWithin) rather than a context, which halves the
	// allocations of a forwarded call (docs/performance.md).
	CallWithin(ctx context.Context, d time.Duration, method string, params json.RawMessage) (json.RawMessage, error)
	// Notify sends a notification.
	Notify(method string, params json.RawMessage) error
	// Done is closed when the connection is gone (the process exited, the
	// stream closed); Err then says why.
	Done() <-chan struct{}
	Err() error
	// Close ends the connection and releases everything it owns. It is
	// idempotent and safe to call concurrently.
	Close(ctx context.Context) error
}

// A Dialer connects a Client to spec's server, handing what the server
// sends (requests, notifications) to h. Options.Dial replaces the default,
// which picks the stdio, streamable HTTP or SSE transport by spec.Type.
type Dialer func(spec config.Spec, h jsonrpc.Handler) (Transport, error)
