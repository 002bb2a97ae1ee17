package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
)

// frameKind is what a frame written by Conn is.
type frameKind int

const (
	frameRequest frameKind = iota
	frameNotification
	frameResponse
)

// frame is one message Conn wrote, with its envelope parsed once.
type frame struct {
	body     []byte
	kind     frameKind
	id       json.RawMessage // request or response id
	method   string
	params   json.RawMessage
	cancelID string          // notifications/cancelled: normalised id of the request it cancels
	caller   *callerExchange // a request its caller POSTs on its own goroutine (callExchange); nil otherwise
}

func parseFrame(body []byte) frame {
	f := frame{body: body}
	var env struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		f.kind = frameNotification // unknown: sent in order, no reply awaited
		return f
	}
	f.id, f.method, f.params = env.ID, env.Method, env.Params
	switch {
	case env.Method != "" && rawHasID(env.ID):
		f.kind = frameRequest
	case env.Method != "":
		f.kind = frameNotification
		if env.Method == "notifications/cancelled" {
			var p struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			if json.Unmarshal(env.Params, &p) == nil {
				f.cancelID = normID(p.RequestID)
			}
		}
	default:
		f.kind = frameResponse
	}
	return f
}

func rawHasID(id json.RawMessage) bool {
	return len(id) > 0 && !bytes.Equal(id, []byte("null"))
}

// normID makes ids comparable: Conn sends numbers, and also accepts them
// back as strings.
func normID(id json.RawMessage) string {
	return string(bytes.Trim(bytes.TrimSpace(id), `"`))
}

// envelope is the part of an incoming message the transports look at.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *jsonrpc.Error  `json:"error"`
}

func (e *envelope) isResponse() bool { return e.Method == "" && rawHasID(e.ID) }

// frameQueue is an unbounded FIFO of frames: push never blocks.
type frameQueue struct {
	mu     sync.Mutex
	frames []frame
	closed bool
	wake   chan struct{}
	unsent int           // frames pushed and not yet handed on by the dispatcher
	sent   chan struct{} // signalled when unsent drops to zero
}

func newFrameQueue() *frameQueue {
	return &frameQueue{wake: make(chan struct{}, 1), sent: make(chan struct{}, 1)}
}

func (q *frameQueue) push(f frame) bool {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	q.frames = append(q.frames, f)
	q.unsent++
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return true
}

// pop waits for the next frame; false once the queue is closed or ctx ends.
func (q *frameQueue) pop(ctx context.Context) (frame, bool) {
	for {
		q.mu.Lock()
		if q.closed {
			q.mu.Unlock()
			return frame{}, false
		}
		if len(q.frames) > 0 {
			f := q.frames[0]
			q.frames[0] = frame{}
			q.frames = q.frames[1:]
			q.mu.Unlock()
			return f, true
		}
		q.mu.Unlock()
		select {
		case <-q.wake:
		case <-ctx.Done():
			return frame{}, false
		}
	}
}

// handed records that the dispatcher is done with one frame it popped.
func (q *frameQueue) handed() {
	q.mu.Lock()
	q.unsent--
	empty := q.unsent <= 0
	q.mu.Unlock()
	if empty {
		select {
		case q.sent <- struct{}{}:
		default:
		}
	}
}

// idle reports whether every frame pushed so far has been handed on, and
// the queue is open: a frame sent now by other means follows them all.
func (q *frameQueue) idle() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.unsent <= 0 && !q.closed
}

// drain waits until every frame pushed so far has been handed on, or ctx
// or stop ends.
func (q *frameQueue) drain(ctx context.Context, stop <-chan struct{}) {
	for {
		q.mu.Lock()
		empty := q.unsent <= 0 || q.closed
		q.mu.Unlock()
		if empty {
			return
		}
		select {
		case <-q.sent:
		case <-ctx.Done():
			return
		case <-stop:
			return
		}
	}
}

func (q *frameQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.frames = nil
	q.mu.Unlock()
}
