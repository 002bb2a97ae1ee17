package jsonrpc

import "encoding/json"

// Request is one request of the peer's, as its Handler is given it.
type Request struct {
	// ID is the request's id exactly as the peer wrote it (a JSON string
	// or number): some answers must name the request they belong to, as
	// the stateless revision's subscriptions/listen stamps its id on every
	// notification of the stream it opens.
	ID     json.RawMessage
	Method string
	Params json.RawMessage

	inflight *inflightRequest // nil for a Request made outside a Conn
}

// Answered returns a channel closed once the response to req has been
// written (or, for a request the peer cancelled, skipped); nil for a
// Request no Conn handed out. A handler that is answered at shutdown (an
// open listen) lets the shutdown wait for its answer to be out before the
// connection's writer goes.
func (req Request) Answered() <-chan struct{} {
	if req.inflight == nil {
		return nil
	}
	return req.inflight.answeredChan()
}
