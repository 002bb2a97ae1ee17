// Package outbox carries notifications to one host. Upstreams' notifications
// arrive on their connections' read loops, which must never wait for the
// host for long: a host that reads slowly (or not at all, or is busy
// receiving a 9 MiB result) would otherwise stall upstreams' responses
// behind their notifications without bound. So notifications are queued,
// bounded in count and in bytes, and written by one goroutine in order.
// When the queue is full, the upstream that sends is throttled: its read
// loop waits up to outboxWait for room, as it would for a pipe. A host
// that has not made room by then is not keeping up: the notification is
// dropped and counted (mcp__trunk__status reports droppedNotifications),
// and so is every other until the queue has drained, without waiting.
// List-change announcements are never dropped: they come from the trunk's
// own announcer, which may wait.
package outbox

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
)

// Outbox bounds: a host that has not read this much is not keeping up.
const (
	outboxCount = 1024
	outboxBytes = 32 << 20
	outboxWait  = time.Second
)

// ErrFull is why a notification was dropped.
var ErrFull = errors.New("the host is not reading: the queue of notifications to it is full")

type outboxNote struct {
	label  string // the host's request it belongs to, for the connection's writer (PostFor); "" for none
	method string
	params json.RawMessage
	size   int64
	marker chan struct{} // a flush: closed when the writer reaches it
}

// Conn is the host's connection, as the outbox writes to it
// (*jsonrpc.Conn).
type Conn interface {
	// CheckSize says why a message of size bytes cannot be sent, if so.
	CheckSize(size int) error
	// NotifyFor writes a notification with the label of the host's
	// request it belongs to ("" for none: jsonrpc.Conn.NotifyFor).
	NotifyFor(label, method string, params json.RawMessage) error
}

// Queue is one host's queue of notifications and the writer that
// empties it.
type Queue struct {
	conn    Conn
	onError func(method string, err error) // a queued notification failed at write
	queue   chan outboxNote
	queued  atomic.Int64 // bytes in queue
	pending atomic.Int64 // notes queued and not yet written
	// congested is set when a notification waited outboxWait in vain, and
	// cleared when the writer finds the queue empty.
	congested atomic.Bool
	stop      chan struct{} // closed by Close

	// The queue (outboxCount notes, 56 KB) and its writer goroutine
	// are made for the first notification: the session of a stateless
	// request is usually answered without one, and thousands may be in
	// flight at once.
	startOnce sync.Once
	mu        sync.Mutex
	ended     bool           // Close was called: no writer starts any more
	writer    sync.WaitGroup // the writer goroutine, once started
}

// New returns the queue of a host's connection; its writer, started with
// the first notification, writes it until Close, and onError hears of a
// queued notification that failed.
func New(conn Conn, onError func(string, error)) *Queue {
	return &Queue{conn: conn, onError: onError, stop: make(chan struct{})}
}

// start makes the queue and its writer, once; everything that touches the
// queue calls it first (sync.Once orders the queue's making before them).
func (o *Queue) start() {
	o.startOnce.Do(func() {
		o.queue = make(chan outboxNote, outboxCount)
		o.mu.Lock()
		defer o.mu.Unlock()
		if !o.ended {
			o.writer.Go(o.run)
		}
	})
}

// Close stops the queue: what is still queued is not written, a Post or
// Flush waiting for room or for the writer returns, and Close returns once
// the writer, if it started, has. Call it once.
func (o *Queue) Close() {
	close(o.stop)
	o.mu.Lock()
	o.ended = true
	o.mu.Unlock()
	o.writer.Wait()
}

// Post queues a notification for the host. The notification is not sent,
// and post says why, when it is larger than the host reads or the host is
// not keeping up (see above); post waits at most outboxWait.
func (o *Queue) Post(method string, params json.RawMessage) error {
	return o.PostFor("", method, params)
}

// PostFor is Post for a notification that belongs to the host's request
// label, which the connection's writer is given beside it
// (jsonrpc.Conn.NotifyFor).
func (o *Queue) PostFor(label, method string, params json.RawMessage) error {
	size := jsonrpc.NotificationLen(method, params)
	if err := o.conn.CheckSize(size); err != nil {
		return err
	}
	o.start()
	n := outboxNote{label: label, method: method, params: params, size: int64(size)}
	if strings.HasSuffix(method, "/list_changed") {
		return o.push(n)
	}
	if o.congested.Load() {
		return ErrFull
	}
	if o.queued.Add(n.size) > outboxBytes {
		o.congested.Store(true) // the bytes bound: take no more until drained
	}
	o.pending.Add(1)
	select {
	case o.queue <- n:
		return nil
	default:
	}
	wait := time.NewTimer(outboxWait)
	defer wait.Stop()
	select {
	case o.queue <- n:
		return nil
	case <-wait.C:
		o.congested.Store(true)
	case <-o.stop:
	}
	o.pending.Add(-1)
	o.queued.Add(-n.size)
	return ErrFull
}

// push queues n, waiting for room.
func (o *Queue) push(n outboxNote) error {
	o.start()
	o.queued.Add(n.size)
	o.pending.Add(1)
	select {
	case o.queue <- n:
		return nil
	case <-o.stop:
		o.pending.Add(-1)
		o.queued.Add(-n.size)
		return jsonrpc.ErrClosed
	}
}

// Push queues a notification that is never dropped (a
// listen's acknowledgement), of size bytes on the wire, waiting for room.
func (o *Queue) Push(method string, params json.RawMessage, size int) error {
	return o.push(outboxNote{method: method, params: params, size: int64(size)})
}

// Flush waits until every notification queued before it has been written:
// an upstream's progress and log messages for a call reach the host before
// the call's answer, as they left the upstream. With nothing queued (the
// usual case) it costs one atomic load.
func (o *Queue) Flush() {
	if o.pending.Load() == 0 {
		return
	}
	marker := make(chan struct{})
	if o.push(outboxNote{marker: marker}) != nil {
		return
	}
	select {
	case <-marker:
	case <-o.stop:
	}
}

// run writes queued notifications until Close.
func (o *Queue) run() {
	for {
		select {
		case n := <-o.queue:
			o.queued.Add(-n.size)
			if n.marker != nil {
				close(n.marker)
			} else if err := o.conn.NotifyFor(n.label, n.method, n.params); err != nil {
				o.onError(n.method, err)
			}
			if o.pending.Add(-1) == 0 {
				o.congested.Store(false)
			}
		case <-o.stop:
			return
		}
	}
}
