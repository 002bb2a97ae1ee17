package jsonrpc

import "runtime"

// Deliver dispatches one message that reached the owner by other means
// than the reader (the body of an HTTP POST), on the calling goroutine,
// as the read loop dispatches a line: a request goes to a handler
// goroutine, a notification to HandleNotification, a response to its
// call. Passing it through a pipe to the read loop instead cost two
// goroutine hand-offs each way per message (io.Pipe's writer waits for
// the reader). line must hold one message, without its newline, and is
// never written to again; one over the read limit (SetMaxReadBytes) is
// treated as the read loop treats such a line. Deliveries are serialised
// among themselves, so notifications keep their order; after the reader
// has ended, Deliver returns ErrClosed and dispatches nothing.
func (c *Conn) Deliver(line []byte) error {
	c.deliverMu.Lock()
	defer c.deliverMu.Unlock()
	if c.readEnded {
		return ErrClosed
	}
	if l := c.readLimit.Load(); l != nil && l.bytes > 0 && len(line)+1 > l.bytes {
		over := &overlong{head: line[:min(len(line), edgeBytes)], tail: line[max(0, len(line)-edgeBytes):], size: int64(len(line) + 1)}
		_ = c.overlongLine(over, l) // it has ended: nothing to resync
		return nil
	}
	c.dispatch(line)
	if len(line) >= hugeMessage {
		runtime.GC() // see hugeMessage
	}
	return nil
}

// endDeliveries stops Deliver before the read loop's end cancels and waits
// for the handlers: none may start after.
func (c *Conn) endDeliveries() {
	c.deliverMu.Lock()
	c.readEnded = true
	c.deliverMu.Unlock()
}
