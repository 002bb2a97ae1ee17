package httpserve

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// A stream is the sequence of messages the trunk sends on one HTTP
// exchange: the reply to one POSTed request (its progress, log messages
// and server requests, then its response), or a session's standalone GET
// stream. Messages are kept, bounded, so that a client whose connection
// dropped can resume with Last-Event-ID and miss nothing; the HTTP
// exchange that writes them may come and go.
type stream struct {
	id string

	mu       sync.Mutex
	events   [][]byte      // every message sent, in order; events[i] has id <id>_<first+i+1>
	first    int           // events dropped from the front (the bound)
	final    bool          // the response is in: the stream ends once it is written
	ended    bool          // closed without a response (the session ended)
	attached *attachment   // the HTTP exchange writing it now, nil when none
	sent     int           // messages written so far: where a new exchange without Last-Event-ID goes on
	wake     chan struct{} // signals the writer that something changed
}

// keptEvents bounds what a stream keeps for resumption.
const keptEvents = 512

func newStream(id string) *stream {
	return &stream{id: id, wake: make(chan struct{}, 1)}
}

func (st *stream) signal() {
	select {
	case st.wake <- struct{}{}:
	default:
	}
}

// send appends a message; last marks the response, which ends the stream.
func (st *stream) send(msg []byte, last bool) {
	st.mu.Lock()
	if st.final || st.ended {
		st.mu.Unlock()
		return
	}
	st.events = append(st.events, msg)
	if len(st.events) > keptEvents { // a reader this far behind has lost the oldest
		drop := len(st.events) - keptEvents
		st.events = st.events[drop:]
		st.first += drop
	}
	st.final = last
	st.mu.Unlock()
	st.signal()
}

// end closes the stream without a response.
func (st *stream) end() {
	st.mu.Lock()
	st.ended = true
	st.mu.Unlock()
	st.signal()
}

// onlyResponse reports whether the stream holds its response and nothing
// before it: then it can go back as one JSON body. ok is false while
// nothing is decided (no message yet).
func (st *stream) onlyResponse() (msg []byte, only, ok bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.events) == 0 && st.first == 0 && !st.ended {
		return nil, false, false
	}
	if st.final && st.first == 0 && len(st.events) == 1 {
		return st.events[0], true, true
	}
	return nil, false, true
}

// position is where an exchange that names no Last-Event-ID goes on.
func (st *stream) position() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.sent
}

// eventID names the n-th message (from 1) of the stream.
func (st *stream) eventID(n int) string { return st.id + "_" + strconv.Itoa(n) }

// parseEventID splits a Last-Event-ID into its stream and position.
func parseEventID(v string) (streamID string, n int, ok bool) {
	i := strings.LastIndexByte(v, '_')
	if i <= 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(v[i+1:])
	if err != nil || n < 0 {
		return "", 0, false
	}
	return v[:i], n, true
}

// errStreamBusy is answered when a second exchange tries to write a
// stream that one already writes.
var errStreamBusy = fmt.Errorf("the stream is already being read on another connection")

// errStreamTaken ends an exchange whose stream a resumption took over.
var errStreamTaken = fmt.Errorf("the stream was resumed on another connection")

// An attachment is one exchange writing a stream: taken is closed to make
// it stop, detached once it has.
type attachment struct {
	taken, detached chan struct{}
}

// attach makes the calling exchange the stream's writer. With takeOver (a
// resumption: the client names the last event it got, so the connection
// that was writing is gone from its side even if the server has not yet
// noticed) the current writer is told to stop and awaited; without it, a
// stream being written is busy.
func (st *stream) attach(ctx context.Context, takeOver bool) (*attachment, error) {
	st.mu.Lock()
	for st.attached != nil {
		if !takeOver {
			st.mu.Unlock()
			return nil, errStreamBusy
		}
		old := st.attached
		select {
		case <-old.taken:
		default:
			close(old.taken)
		}
		st.mu.Unlock()
		select {
		case <-old.detached:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		st.mu.Lock()
	}
	a := &attachment{taken: make(chan struct{}), detached: make(chan struct{})}
	st.attached = a
	st.mu.Unlock()
	return a, nil
}

func (st *stream) detach(a *attachment) {
	st.mu.Lock()
	st.attached = nil
	st.mu.Unlock()
	close(a.detached)
}

// writeSSE writes the stream's messages after position from as server-sent
// events until the stream ends or the client goes away (ctx). Only one
// exchange writes a stream at a time: takeOver (a resumption) replaces the
// one writing it, otherwise the stream is busy (errStreamBusy).
func (st *stream) writeSSE(ctx context.Context, w http.ResponseWriter, from int, done <-chan struct{}, takeOver bool) error {
	a, err := st.attach(ctx, takeOver)
	if err != nil {
		return err
	}
	defer st.detach(a)
	flusher, _ := w.(http.Flusher)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if flusher != nil {
		flusher.Flush()
	}
	next := from
	for {
		st.mu.Lock()
		if next < st.first {
			next = st.first // dropped for the bound: what is left follows
		}
		pending := append([][]byte(nil), st.events[next-st.first:]...)
		final, ended := st.final, st.ended
		st.mu.Unlock()
		for _, msg := range pending {
			next++
			if _, err := fmt.Fprintf(w, "id: %s\nevent: message\ndata: %s\n\n", st.eventID(next), msg); err != nil {
				return err
			}
			st.mu.Lock()
			st.sent = max(st.sent, next)
			st.mu.Unlock()
		}
		if len(pending) > 0 && flusher != nil {
			flusher.Flush()
		}
		if final || ended {
			st.mu.Lock()
			caughtUp := next-st.first >= len(st.events)
			st.mu.Unlock()
			if caughtUp {
				return nil
			}
			continue
		}
		select {
		case <-st.wake:
		case <-ctx.Done():
			return ctx.Err()
		case <-a.taken:
			return errStreamTaken
		case <-done:
			return nil
		}
	}
}
