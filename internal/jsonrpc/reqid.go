package jsonrpc

import (
	"context"
	"encoding/json"
)

type requestIDKey struct{}

// RequestID returns the id of the peer's request that ctx was handed to
// HandleRequest for, exactly as the peer wrote it (a JSON string or number),
// or nil for any other ctx. Some answers must name the request they belong
// to: the stateless revision's subscriptions/listen stamps its id on every
// notification of the stream it opens.
func RequestID(ctx context.Context) json.RawMessage {
	id, _ := ctx.Value(requestIDKey{}).(json.RawMessage)
	return id
}

type answeredKey struct{}

// Answered returns a channel closed once the response to the peer's request
// that ctx was handed to HandleRequest for has been written (or, for a
// request the peer cancelled, skipped); nil for any other ctx. A handler
// that is answered at shutdown (an open listen) lets the shutdown wait for
// its answer to be out before the connection's writer goes.
func Answered(ctx context.Context) <-chan struct{} {
	ch, _ := ctx.Value(answeredKey{}).(chan struct{})
	return ch
}
