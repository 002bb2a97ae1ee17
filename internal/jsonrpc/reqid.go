package jsonrpc

import (
	"context"
	"encoding/json"
)

// inflightKey finds the *inflightRequest a handler's ctx belongs to (the
// request is that ctx: see inflightRequest.Value), for RequestID and
// Answered.
type inflightKey struct{}

func inflightOf(ctx context.Context) *inflightRequest {
	req, _ := ctx.Value(inflightKey{}).(*inflightRequest)
	return req
}

// RequestID returns the id of the peer's request that ctx was handed to
// HandleRequest for, exactly as the peer wrote it (a JSON string or number),
// or nil for any other ctx. Some answers must name the request they belong
// to: the stateless revision's subscriptions/listen stamps its id on every
// notification of the stream it opens.
func RequestID(ctx context.Context) json.RawMessage {
	if req := inflightOf(ctx); req != nil {
		return req.id
	}
	return nil
}

// Answered returns a channel closed once the response to the peer's request
// that ctx was handed to HandleRequest for has been written (or, for a
// request the peer cancelled, skipped); nil for any other ctx. A handler
// that is answered at shutdown (an open listen) lets the shutdown wait for
// its answer to be out before the connection's writer goes.
func Answered(ctx context.Context) <-chan struct{} {
	if req := inflightOf(ctx); req != nil {
		return req.answeredChan()
	}
	return nil
}
