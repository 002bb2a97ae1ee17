package upstream

import (
	"context"
	"encoding/json"
)

// transport is how a Client reaches its server: the one seam between the
// protocol logic in Client and the way bytes travel (a subprocess's stdio,
// streamable HTTP and SSE behind the same five methods). Params and
// results are raw JSON so nothing is lost in transit.
type transport interface {
	// Call sends a request and waits for its response. A JSON-RPC error from
	// the server comes back as *jsonrpc.Error, unchanged.
	Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
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
