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
	Notify(method string, params json.RawMessage) error
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
	stop      <-chan struct{}
}

// New returns the queue of a host's connection; Run writes it until stop
// closes, and onError hears of a queued notification that failed.
func New(conn Conn, stop <-chan struct{}, onError func(string, error)) *Queue {
	return &Queue{conn: conn, onError: onError, queue: make(chan outboxNote, outboxCount), stop: stop}
}

// Post queues a notification for the host. The notification is not sent,
// and post says why, when it is larger than the host reads or the host is
// not keeping up (see above); post waits at most outboxWait.
func (o *Queue) Post(method string, params json.RawMessage) error {
	size := jsonrpc.NotificationLen(method, params)
	if err := o.conn.CheckSize(size); err != nil {
		return err
	}
	n := outboxNote{method: method, params: params, size: int64(size)}
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

// Run writes queued notifications until stop closes.
func (o *Queue) Run() {
	for {
		select {
		case n := <-o.queue:
			o.queued.Add(-n.size)
			if n.marker != nil {
				close(n.marker)
			} else if err := o.conn.Notify(n.method, n.params); err != nil {
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
