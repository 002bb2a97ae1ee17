package jsonrpc

import "fmt"

// A connection with Options.InlineRequests runs each request of the
// peer's on the read loop, to its answer, before it reads the next line.
// That is right only for a peer that sends one request at a time and
// needs nothing read while it is handled: no answer to a request of ours
// (Call fails at once rather than wait for a read that cannot happen),
// no cancellation on the connection (the owner cancels with
// CancelRequests). A stateless HTTP request's session is such a peer:
// its one request comes in, its answer goes out, and the client going
// away ends it from outside. It saves the handler goroutine and the
// hand-off to it, on the one path where the trunk makes a connection
// per request.

// runInline answers j on the calling goroutine, the read loop.
func (c *Conn) runInline(j handlerJob) {
	c.handlers.Add(1)
	defer c.handlers.Done()
	c.runHandler(j)
}

// CancelRequests cancels every request of the peer's being handled, as
// the end of the input does: their handlers' contexts end. A connection
// with Options.InlineRequests needs it, since its read loop is busy with
// the request and cannot see the input end.
func (c *Conn) CancelRequests() { c.cancelInflight() }

// errInlineCall is Call's error on a connection that handles requests
// inline: the answer could never be read.
func errInlineCall(method string) error {
	return fmt.Errorf("sending %s: this connection reads nothing while it handles a request, so it cannot wait for an answer", method)
}
