package jsonrpc

import (
	"bytes"
	"io"
	"runtime"
)

// A Conn takes its peer's messages whole and gives its own whole. It
// reads them from a MessageReader (Serve's read loop), or they are handed
// to it by whoever received them (Deliver, Answer: the body of an HTTP
// POST), and it writes them to a MessageWriter. The line-delimited framing
// of stdio is one pair of adapters, LineReader and LineWriter, which the
// Conn reads and writes directly: a line over the read limit is never held
// whole (lines.go), and a large payload is written without being copied
// into one buffer first.

// MessageReader is where a Conn's read loop takes its peer's messages.
type MessageReader interface {
	// ReadMessage returns the peer's next message, whole and the
	// caller's (it is never written to again); after the last one it
	// returns io.EOF, or why the input failed.
	ReadMessage() ([]byte, error)
}

// MessageWriter is where a Conn puts its messages for the peer.
type MessageWriter interface {
	// WriteMessage sends one message, whole. msg is valid only during the
	// call: a writer that keeps it keeps a copy. A Conn never calls it
	// concurrently.
	WriteMessage(msg []byte) error
}

// A LabelWriter is a MessageWriter that also takes the label its owner
// gave a message (Conn.NotifyFor, CallFor): a value the Conn passes
// through without reading, for a writer that routes by it (the HTTP
// downstream's router: the host's request a message belongs to). A
// message without a label goes to WriteMessage.
type LabelWriter interface {
	MessageWriter
	WriteLabelled(msg []byte, label string) error
}

// ReadMessage returns the next line that is not blank, without its
// newline, read without a limit: a MessageReader for a reader other than
// a Conn, which reads a LineReader with its own limit.
func (lr *LineReader) ReadMessage() ([]byte, error) {
	for {
		line, _, err := lr.next(0, 0)
		if t := bytes.TrimSpace(line); len(t) > 0 {
			return t, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// Close closes the stream the LineReader reads when that can be closed,
// which ends a read waiting on it (a Conn's Close): a pipe, a socket, a
// pollable file. It does nothing for any other stream.
func (lr *LineReader) Close() error {
	if c, ok := lr.src.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// closable reports whether Close ends a read waiting on the stream.
func (lr *LineReader) closable() bool {
	_, ok := lr.src.(io.Closer)
	return ok
}

// Unclosable hides r's Close from a Conn's (Close closes a reader it can,
// to end its read loop, and waits for that loop): for a blocking file (a
// stdin), whose read closing would not end. Close then leaves the read
// loop to its read.
func Unclosable(r io.Reader) io.Reader { return struct{ io.Reader }{r} }

// LineWriter writes each message as one line of w: the line-delimited
// framing of stdio.
type LineWriter struct{ w io.Writer }

// NewLineWriter returns a LineWriter writing to w.
func NewLineWriter(w io.Writer) *LineWriter { return &LineWriter{w: w} }

// WriteMessage writes msg and its newline in one Write.
func (lw *LineWriter) WriteMessage(msg []byte) error {
	b := append(append(getBuf(len(msg)), msg...), '\n')
	_, err := lw.w.Write(b)
	putBuf(b)
	return err
}

// Deliver hands the Conn one message that its owner received (the body
// of an HTTP POST), dispatched on the calling goroutine as the read loop
// dispatches one: a request goes to a handler goroutine, a notification
// to HandleNotification, a response to its call. msg holds one message
// and is never written to again; one over the read limit
// (SetMaxReadBytes) is refused as a line over it is. Deliveries are
// serialised with each other and with the read loop, so notifications
// keep their order. After the Conn has ended (its reader, or Close),
// Deliver returns ErrClosed and dispatches nothing.
func (c *Conn) Deliver(msg []byte) error { return c.receive(msg, false) }

// Answer is Deliver for a request answered on the calling goroutine: it
// returns once the request's answer is written, or the request was
// cancelled (Close, or the peer's notifications/cancelled) and has none.
// It suits a peer whose every request comes with an exchange of its own
// that waits for its answer (a stateless HTTP request): the exchange's
// goroutine runs it, without a hand-off to a handler goroutine and back.
func (c *Conn) Answer(msg []byte) error { return c.receive(msg, true) }

// receive dispatches one message handed to the Conn (Deliver, Answer, or
// the read loop of a MessageReader other than a LineReader); inline runs
// a request on the calling goroutine. The check that the Conn still takes
// messages and the start of a request's handler are one step under
// recvMu: none starts after the Conn's end began waiting for them.
func (c *Conn) receive(msg []byte, inline bool) error {
	c.recvMu.Lock()
	if c.recvEnded {
		c.recvMu.Unlock()
		return ErrClosed
	}
	if l := c.readLimit.Load(); l != nil && l.bytes > 0 && len(msg)+1 > l.bytes {
		over := &overlong{head: msg[:min(len(msg), edgeBytes)], tail: msg[max(0, len(msg)-edgeBytes):], size: int64(len(msg) + 1)}
		_ = c.overlongLine(over, l) // whole already: nothing to resync
		c.recvMu.Unlock()
		return nil
	}
	j, run := c.dispatch(msg, inline)
	c.recvMu.Unlock()
	if run {
		c.runInline(j)
	}
	if len(msg) >= hugeMessage {
		runtime.GC() // see hugeMessage
	}
	return nil
}

// runInline answers j on the calling goroutine; dispatch counted it in
// c.handlers.
func (c *Conn) runInline(j handlerJob) {
	defer c.handlers.Done()
	c.runHandler(j)
}

// stopReceiving makes receive refuse messages from now on, and the read
// loop dispatch none: the Conn's end then cancels and waits for handlers
// of which none can start after.
func (c *Conn) stopReceiving() {
	c.recvMu.Lock()
	c.recvEnded = true
	c.recvMu.Unlock()
}
