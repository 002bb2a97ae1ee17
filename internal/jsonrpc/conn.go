package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/logkey"
)

// Handler receives what the peer sends on its own initiative.
//
// HandleRequest runs on its own goroutine, owned by the Conn; its ctx ends when
// the peer cancels the request (notifications/cancelled) or the connection
// ends, and carries nothing else: what the request is comes as req. An
// *Error returned from it is sent as is; any other error becomes an
// internal error.
//
// HandleNotification runs on the read loop, in arrival order: it must not block
// on this connection (hand such work to a goroutine).
type Handler interface {
	HandleRequest(ctx context.Context, req Request) (json.RawMessage, error)
	HandleNotification(method string, params json.RawMessage)
}

// Options tune a Conn. A nil *Options is valid.
type Options struct {
	// Logger receives protocol problems (unparseable lines, unknown response
	// ids). Nil discards them.
	Logger *slog.Logger
	// AnswerInvalid makes the Conn answer a line that is not a valid
	// message with -32700 or -32600, as a JSON-RPC server does (see
	// invalid.go). The trunk sets it on the host's connection only.
	AnswerInvalid bool
	// ResyncBytes bounds how much of a line over the read limit
	// (SetMaxReadBytes) is read looking for its end before the Conn ends
	// as unable to find the next message (see lines.go); 0: no bound. A
	// server's connection sets it (ResyncBytes), so that a server writing
	// without end is restarted; the host's does not, so that the trunk
	// never ends itself over what a host writes.
	ResyncBytes int64
	// MaxReadBytes is the read limit to start with (see SetMaxReadBytes);
	// ReadLimitSetting names the setting behind it.
	MaxReadBytes     int
	ReadLimitSetting string
	// Redact, when set, blanks what must not be logged or kept from a
	// line that is not JSON-RPC (the secrets a server was given) before
	// it is logged or kept for FirstInvalidLine.
	Redact func(string) string
	// MaxUnreadBytes, when set, bounds what the connection holds for a
	// peer that does not read its answers, and MaxHandled (default
	// DefaultMaxHandled) the peer's requests handled at once: past them
	// the connection stops reading the peer until it reads (unread.go).
	// The trunk sets them on the stdio host's connection.
	MaxUnreadBytes int64
	MaxHandled     int
}

// Conn is one JSON-RPC peer, taking and giving whole messages (seam.go).
// Serve returns once the reader reports EOF or an error, or Close was
// called; whoever made the reader and the writer owns them, but Close
// closes a reader that can be closed, to end the read loop.
type Conn struct {
	// fixed at creation
	src     MessageReader // nil: messages come only through Deliver and Answer
	lines   *LineReader   // src, when it reads lines: read with the limit (lines.go)
	out     MessageWriter
	lineOut io.Writer   // out's stream, when out is a LineWriter: frames are written to it directly
	labels  LabelWriter // out, when it takes labels (NotifyFor, CallFor)
	handler Handler
	logger  *slog.Logger
	done    chan struct{}
	nextID  atomic.Int64
	garbage atomic.Int64
	// firstGarbage is the first line that was not JSON-RPC, clipped (see
	// FirstInvalidLine).
	firstGarbage atomic.Pointer[string]
	// answerInvalid: see Options.AnswerInvalid.
	answerInvalid bool
	redact        func(string) string // see Options.Redact; nil: none
	gate          *answerGate         // see Options.MaxUnreadBytes; nil: none
	resync        int64
	// limit bounds what is written (see limit.go), readLimit what is read
	// (lines.go); nil: no bound.
	limit     atomic.Pointer[messageLimit]
	readLimit atomic.Pointer[messageLimit]

	handlers sync.WaitGroup  // one per handler goroutine (see handle)
	idle     chan handlerJob // to a handler goroutine waiting for its next request
	idlers   atomic.Int32    // handler goroutines waiting on idle
	readDone chan struct{}   // closed when the Conn takes no more messages
	// recvMu serialises the dispatch of messages (the read loop's,
	// Deliver's, Answer's), and recvEnded (under it) stops it once the
	// Conn is ending (stopReceiving).
	recvMu    sync.Mutex
	recvEnded bool
	writeMu   sync.Mutex    // serialises messages on out
	endOnce   sync.Once     // the end: see end
	closing   chan struct{} // closed by Close
	loopDone  chan struct{} // closed when Serve's read loop has returned
	serving   bool          // Serve was called (under mu)
	closed    bool          // Close was called (under mu)

	mu       sync.Mutex
	pending  map[int64]chan response     // our requests awaiting a response
	inflight map[string]*inflightRequest // the peer's requests being handled, by raw id
	running  *inflightRequest            // all of them, duplicate ids too: a list through inflightRequest.next
	err      error                       // why the connection ended, once done is closed
}

type response struct {
	result json.RawMessage
	err    *Error
	fail   error // no answer could be read (an *OverlongLineError)
}

// NewConn returns a connection reading messages from r (nil: none, every
// message is handed to it, Deliver and Answer) and writing them to w.
// Nothing is read until Serve is called.
func NewConn(r MessageReader, w MessageWriter, h Handler, opts *Options) *Conn {
	logger := slog.New(slog.DiscardHandler)
	if opts != nil && opts.Logger != nil {
		logger = opts.Logger
	}
	var redact func(string) string
	if opts != nil {
		redact = opts.Redact
	}
	c := &Conn{
		answerInvalid: opts != nil && opts.AnswerInvalid,
		redact:        redact,
		src:           r,
		out:           w,
		handler:       h,
		logger:        logger,
		done:          make(chan struct{}),
		idle:          make(chan handlerJob),
		readDone:      make(chan struct{}),
		closing:       make(chan struct{}),
		loopDone:      make(chan struct{}),
		pending:       make(map[int64]chan response),
		inflight:      make(map[string]*inflightRequest),
	}
	c.lines, _ = r.(*LineReader)
	if lw, ok := w.(*LineWriter); ok {
		c.lineOut = lw.w
	}
	c.labels, _ = w.(LabelWriter)
	if opts != nil {
		c.gate = newAnswerGate(opts.MaxUnreadBytes, opts.MaxHandled, logger)
		c.resync = opts.ResyncBytes
		c.SetMaxReadBytes(opts.MaxReadBytes, opts.ReadLimitSetting)
	}
	return c
}

// Done is closed when the connection has ended.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err reports why the connection ended (nil while it is open, ErrClosed
// wrapped with the read error's text after it ended).
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Serve reads and dispatches messages until the reader ends or Close is
// called; with no reader, it waits for Close. It then fails every pending
// call, cancels every request being handled, waits for their handlers to
// return, and returns nil on a clean EOF or after Close.
func (c *Conn) Serve() error {
	defer close(c.loopDone)
	c.mu.Lock()
	closed := c.closed
	c.serving = true
	c.mu.Unlock()
	var readErr error = io.EOF
	if !closed {
		readErr = c.readLoop()
	}
	if c.lines != nil {
		c.lines.release() // the read loop was its one reader
	}
	select {
	case <-c.closing:
		readErr = io.EOF // what the read saw of Close is no error of the peer's
	default:
	}
	c.end(readErr)
	if errors.Is(readErr, io.EOF) {
		return nil
	}
	return readErr
}

// Close ends the connection from this side, as the end of its input does:
// no message is taken from then on, every request of the peer's being
// handled is cancelled and every call waiting fails; Close returns once
// their handlers have returned and the read loop has ended. The read
// loop's reader is closed when it can be (an io.Closer, or a LineReader
// over one); one that cannot (a blocking stdin) is left to its read, and
// nothing it reads after is dispatched. It must not be called from a
// handler of the Conn's own, which it would wait for. Later calls wait
// as the first does.
func (c *Conn) Close() error {
	c.mu.Lock()
	first := !c.closed
	c.closed = true
	serving := c.serving
	c.mu.Unlock()
	if first {
		close(c.closing)
	}
	closable := false
	switch r := c.src.(type) {
	case nil:
		closable = true // the read loop waits for closing
	case *LineReader:
		if closable = r.closable(); closable && first {
			_ = r.Close()
		}
	case io.Closer:
		closable = true
		if first {
			_ = r.Close()
		}
	}
	if serving && closable {
		<-c.loopDone
	}
	c.end(io.EOF)
	return nil
}

// end ends the Conn once: it takes no more messages, its idle handler
// goroutines exit, the requests being handled are cancelled and waited
// for, and the calls still waiting fail. A second caller waits for the
// first's end.
func (c *Conn) end(readErr error) {
	c.endOnce.Do(func() {
		c.stopReceiving()
		close(c.readDone) // idle handler goroutines exit
		c.cancelInflight()
		c.handlers.Wait()
		endErr := ErrClosed
		if !errors.Is(readErr, io.EOF) {
			endErr = fmt.Errorf("%w: %w", ErrClosed, readErr)
		}
		c.mu.Lock()
		c.err = endErr
		c.pending = nil // further calls see done and fail fast
		c.mu.Unlock()
		close(c.done)
	})
}

func (c *Conn) readLoop() error {
	if c.src == nil {
		<-c.closing
		return io.EOF
	}
	for {
		if c.gate != nil {
			c.gate.awaitRead()
		}
		if c.lines == nil {
			msg, err := c.src.ReadMessage()
			if len(msg) > 0 {
				if rerr := c.receive(msg, false); rerr != nil {
					return io.EOF // the Conn is ending
				}
			}
			if err != nil {
				return err
			}
			continue
		}
		l := c.readLimit.Load()
		if l == nil {
			l = &messageLimit{}
		}
		line, over, err := c.lines.next(l.bytes, c.resync)
		select {
		case <-c.closing: // what a reader Close could not wake read: not dispatched, not answered
			return io.EOF
		default:
		}
		if over != nil {
			if end := c.overlongLine(over, l); end != nil {
				return end
			}
			runtime.GC() // what was collected of it, up to the limit: see hugeMessage
		} else if len(bytes.TrimSpace(line)) > 0 {
			c.recvMu.Lock()
			ended := c.recvEnded
			if !ended {
				c.dispatch(line, false)
			}
			c.recvMu.Unlock()
			if ended {
				return io.EOF
			}
		}
		if len(line) >= hugeMessage {
			runtime.GC() // see hugeMessage
		}
		if err != nil {
			return err
		}
	}
}

// dispatch handles one message; recvMu is held. A request is started on
// a handler goroutine, or, inline, counted in c.handlers and returned
// (run) for the caller to run once it has let go of recvMu.
func (c *Conn) dispatch(line []byte, inline bool) (j handlerJob, run bool) {
	m, err := decodeMessage(line)
	if err != nil {
		c.rejectInvalid(line, classifyUndecodable(line, err))
		return
	}
	if inv := checkEnvelope(&m); inv != nil {
		c.rejectInvalid(line, inv)
		if inv.response { // its call fails now rather than wait for an answer that came
			c.deliver(m.ID, response{err: inv.err})
		}
		return
	}
	switch {
	case m.isRequest():
		if inline {
			return c.inlineJob(m), true
		}
		c.startHandler(m)
		yieldToWoken()
	case m.isNotification():
		if m.Method == "notifications/cancelled" {
			c.peerCancelled(m.Params)
			return
		}
		c.notify(m.Method, m.Params)
	default: // checkEnvelope saw to it that it has an id: a response
		if m.Error != nil {
			m.Error.peer = true
		}
		c.deliver(m.ID, response{result: m.Result, err: m.Error})
		yieldToWoken()
	}
	return
}

// yieldToWoken lets the goroutine a message just woke (a handler given a
// request, a call given its answer) run on this thread before the read
// loop reads again: on a blocking reader (the stdio host's stdin) the next
// read holds the thread and its P in the kernel, and the woken goroutine
// would wait for the scheduler to wake another thread to take it. The
// trade: a scheduler call per message, a fraction of a microsecond on a
// pollable reader, for a quarter of the trunk's CPU per stdio call
// (docs/performance.md, "What library code asks of the runtime").
func yieldToWoken() { runtime.Gosched() }

// reportGarbage logs lines that are not JSON-RPC: the first few in full
// (truncated), then only every thousandth, so a server that floods stdout
// with junk cannot flood the log.
func (c *Conn) reportGarbage(line []byte, err error) {
	n := c.garbage.Add(1)
	if n > 5 && n%1000 != 0 {
		return
	}
	text := string(bytes.TrimSpace(line))
	if c.redact != nil {
		text = c.redact(text) // whole, before a cut could split a secret
	}
	const show = 120
	if len(text) > show {
		text = text[:show]
	}
	if n == 1 {
		c.firstGarbage.Store(&text)
	}
	c.logger.Warn("ignoring a line that is not JSON-RPC", "line", text, "error", err, "count", n)
}

// FirstInvalidLine returns the first line the peer sent that was not
// JSON-RPC (redacted, then its first 120 bytes), or "" when there was none: a server
// that writes its own text to stdout never answers, and this line is what
// tells its user why.
func (c *Conn) FirstInvalidLine() string {
	if p := c.firstGarbage.Load(); p != nil {
		return *p
	}
	return ""
}

// deliver gives the call waiting for the response with id its answer.
func (c *Conn) deliver(rawID json.RawMessage, r response) {
	id, err := strconv.ParseInt(string(bytes.Trim(rawID, `"`)), 10, 64)
	if err != nil {
		c.logger.Warn("response with an id this side never sent", "id", logkey.Clip(string(rawID)))
		return
	}
	c.mu.Lock()
	ch, ok := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	if !ok {
		c.logger.Debug("response to a request no longer waiting", "id", id)
		return
	}
	ch <- r
}

// notify runs the notification handler, containing a panic to the one
// notification that caused it.
func (c *Conn) notify(method string, params json.RawMessage) {
	defer func() {
		if p := recover(); p != nil {
			c.logger.Error("notification handler panicked", "method", logkey.Clip(method), "panic", p)
		}
	}()
	c.handler.HandleNotification(method, params)
}

// Call sends a request and waits for its response. When ctx ends first, the
// peer is sent notifications/cancelled for the request and ctx's error is
// returned. A JSON-RPC error from the peer is returned as an *Error, exactly
// as the peer sent it.
func (c *Conn) Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return c.call(ctx, 0, "", method, params)
}

// CallFor is Call for a request that belongs to label, which the Conn
// hands its writer beside the request when the writer takes labels (a
// LabelWriter); any other writer gets the request alone.
func (c *Conn) CallFor(ctx context.Context, label, method string, params json.RawMessage) (json.RawMessage, error) {
	return c.call(ctx, 0, label, method, params)
}

// ErrNotSent is wrapped by a Call's error when the request never reached
// the peer: the connection had ended before it, or writing it failed (the
// peer's input closed, as a process that died has). Sending it again on
// another connection cannot run it twice.
var ErrNotSent = errors.New("the request was not sent")

// ErrTimedOut is CallWithin's error when its bound passes first. It is
// context.DeadlineExceeded, as a call under context.WithTimeout would end.
var ErrTimedOut = fmt.Errorf("call timed out: %w", context.DeadlineExceeded)

// CallWithin is Call bounded by d (none when d <= 0) without a context of
// its own: it waits on a timer from a pool, sparing every call the
// allocations of context.WithTimeout. When d passes first, the request is
// cancelled at the peer ("timed out") and the error is ErrTimedOut.
func (c *Conn) CallWithin(ctx context.Context, d time.Duration, method string, params json.RawMessage) (json.RawMessage, error) {
	return c.call(ctx, d, "", method, params)
}

// CallExchange is Call for a request its caller carries to the peer
// itself, in an exchange of its own whose reply holds the answer (an HTTP
// POST): exchange gets the request's message on the calling goroutine,
// outside the write lock, and hands what the peer sends back to Deliver
// before it returns, so the answer is waiting when the call looks for it:
// no goroutine is woken between the request and its caller. msg is valid
// only during exchange. An exchange that ends without the answer (the
// peer sends it another way, or exchange gave up when ctx ended) leaves
// the call waiting as Call's would.
func (c *Conn) CallExchange(ctx context.Context, method string, params json.RawMessage, exchange func(msg []byte)) (json.RawMessage, error) {
	return c.callVia(ctx, 0, "", method, params, exchange)
}

// timers recycles CallWithin's timers, stopped. Since Go 1.23 a stopped
// timer delivers nothing stale, so a Reset one fires only for its new call.
var timers = sync.Pool{New: func() any {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return t
}}

func (c *Conn) call(ctx context.Context, d time.Duration, label, method string, params json.RawMessage) (json.RawMessage, error) {
	return c.callVia(ctx, d, label, method, params, nil)
}

// callVia is every call: the request is written to the Conn's writer, or,
// with exchange, given to it (CallExchange).
func (c *Conn) callVia(ctx context.Context, d time.Duration, label, method string, params json.RawMessage, exchange func(msg []byte)) (json.RawMessage, error) {
	id := c.nextID.Add(1)
	ch := responseChans.Get().(chan response)
	c.mu.Lock()
	if c.pending == nil {
		err := c.err
		c.mu.Unlock()
		responseChans.Put(ch)
		return nil, fmt.Errorf("%w: %w", ErrNotSent, err)
	}
	c.pending[id] = ch
	c.mu.Unlock()

	var idBuf [20]byte
	var err error
	if exchange != nil {
		err = c.giveRequest(strconv.AppendInt(idBuf[:0], id, 10), method, params, exchange)
	} else {
		err = c.writeRequest(label, strconv.AppendInt(idBuf[:0], id, 10), method, params)
	}
	if err != nil {
		c.forget(id)
		if _, over := err.(*TooLargeError); !over {
			err = fmt.Errorf("%w: %w", ErrNotSent, err)
		}
		return nil, fmt.Errorf("sending %s: %w", method, err)
	}

	var bound <-chan time.Time // nil, which never fires, without d
	if d > 0 {
		t := timers.Get().(*time.Timer)
		t.Reset(d)
		defer func() {
			t.Stop()
			timers.Put(t)
		}()
		bound = t.C
	}
	select {
	case r := <-ch:
		// deliver took ch out of pending before sending on it: nothing
		// else can send on it now, so it can serve another call.
		responseChans.Put(ch)
		return r.answer()
	case <-ctx.Done():
		select {
		case r := <-ch: // the answer came first: it is the call's outcome
			responseChans.Put(ch)
			return r.answer()
		default:
		}
		c.forget(id)
		c.sendCancel(ctx, strconv.AppendInt(nil, id, 10), "")
		return nil, ctx.Err()
	case <-bound:
		c.forget(id)
		c.sendCancel(ctx, strconv.AppendInt(nil, id, 10), "timed out")
		return nil, ErrTimedOut
	case <-c.done:
		// A response may have raced the end of the connection.
		select {
		case r := <-ch:
			return r.answer()
		default:
		}
		return nil, c.Err()
	}
}

// answer is what Call returns for r.
func (r response) answer() (json.RawMessage, error) {
	switch {
	case r.fail != nil:
		return nil, r.fail
	case r.err != nil:
		return nil, r.err
	}
	return r.result, nil
}

// responseChans recycles the channels Call waits on, one per call.
var responseChans = sync.Pool{New: func() any { return make(chan response, 1) }}

func (c *Conn) forget(id int64) {
	c.mu.Lock()
	if c.pending != nil {
		delete(c.pending, id)
	}
	c.mu.Unlock()
}

func (c *Conn) sendCancel(ctx context.Context, id []byte, reason string) {
	switch {
	case reason != "":
	case errors.Is(context.Cause(ctx), context.DeadlineExceeded):
		reason = "timed out"
	default:
		reason = "cancelled"
	}
	params, _ := json.Marshal(struct {
		RequestID json.RawMessage `json:"requestId"`
		Reason    string          `json:"reason"`
	}{id, reason})
	if err := c.Notify("notifications/cancelled", params); err != nil {
		c.logger.Debug("sending a cancellation failed", "error", err)
	}
}

// Notify sends a notification.
func (c *Conn) Notify(method string, params json.RawMessage) error {
	return c.NotifyFor("", method, params)
}

// NotifyFor is Notify for a notification that belongs to label (see
// CallFor).
func (c *Conn) NotifyFor(label, method string, params json.RawMessage) error {
	select {
	case <-c.done:
		return c.Err()
	default:
	}
	return c.writeRequest(label, nil, method, params)
}

// writeRequest writes a request (id != nil) or a notification, with its
// label ("" for none).
func (c *Conn) writeRequest(label string, id json.RawMessage, method string, params json.RawMessage) error {
	if largeRaw(params) {
		head := appendRequestHead(getBuf(0), id, method, true)
		if e := c.tooLarge(len(head) + len(params) + len(frameEnd)); e != nil {
			putBuf(head)
			return e
		}
		return c.writeSplit(head, params, label)
	}
	frame := appendRequest(getBuf(len(params)), id, method, params)
	if e := c.tooLarge(len(frame)); e != nil {
		putBuf(frame)
		return e
	}
	return c.writeFrame(frame, label)
}

// giveRequest builds a request's message, as writeRequest would write it,
// and gives it to exchange.
func (c *Conn) giveRequest(id json.RawMessage, method string, params json.RawMessage, exchange func(msg []byte)) error {
	frame := appendRequest(getBuf(len(params)), id, method, params)
	if e := c.tooLarge(len(frame)); e != nil {
		putBuf(frame)
		return e
	}
	exchange(frame[:len(frame)-1]) // a message has no newline
	putBuf(frame)
	return nil
}

func (c *Conn) writeResponse(id, result json.RawMessage, rpcErr *Error) error {
	if rpcErr == nil && largeRaw(result) {
		head := appendResultHead(getBuf(0), id)
		e := c.tooLarge(len(head) + len(result) + len(frameEnd))
		if e == nil {
			return c.writeSplit(head, result, "")
		}
		putBuf(head)
		c.logger.Warn("answering with an error instead of an oversized result", "bytes", e.Size, "limit", e.Limit)
		result, rpcErr = nil, oversizedAnswer(e)
	}
	frame, err := appendResponse(getBuf(len(result)), id, result, rpcErr)
	if err != nil {
		return err
	}
	if e := c.tooLarge(len(frame)); e != nil {
		putBuf(frame)
		c.logger.Warn("answering with an error instead of an oversized answer", "bytes", e.Size, "limit", e.Limit)
		if frame, err = appendResponse(getBuf(0), id, nil, oversizedAnswer(e)); err != nil {
			return err
		}
	}
	return c.writeFrame(frame, "")
}

// writeFrame writes one complete message, with its label ("" for none)
// to a writer that takes labels. Frames are written whole under one lock
// so concurrent senders never interleave.
func (c *Conn) writeFrame(frame []byte, label string) error {
	var err error
	c.writeMu.Lock()
	switch msg := frame[:len(frame)-1]; { // a MessageWriter's message has no newline
	case c.lineOut != nil:
		_, err = c.lineOut.Write(frame)
	case label != "" && c.labels != nil:
		err = c.labels.WriteLabelled(msg, label)
	default:
		err = c.out.WriteMessage(msg)
	}
	c.writeMu.Unlock()
	putBuf(frame)
	return err
}

// writeSplit writes one message made of head, a large payload and the
// frame's end, under the same lock as writeFrame, without first copying the
// payload (a multi-megabyte result) into a frame buffer.
func (c *Conn) writeSplit(head []byte, payload json.RawMessage, label string) error {
	if c.lineOut == nil { // a MessageWriter takes the message whole
		frame := append(append(append(getBuf(len(head)+len(payload)), head...), payload...), frameEnd...)
		putBuf(head)
		return c.writeFrame(frame, label)
	}
	c.writeMu.Lock()
	_, err := c.lineOut.Write(head)
	if err == nil {
		_, err = c.lineOut.Write(payload)
	}
	if err == nil {
		_, err = c.lineOut.Write(frameEnd)
	}
	c.writeMu.Unlock()
	putBuf(head)
	return err
}
