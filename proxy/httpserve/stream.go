package httpserve

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A stream is the sequence of messages the trunk sends on one HTTP
// exchange: the reply to one POSTed request (its progress, log messages
// and server requests, then its response), or a session's standalone GET
// stream. Messages are kept, bounded (by the router's budget, budget.go),
// so that a client whose connection dropped can resume with Last-Event-ID
// and miss nothing; the HTTP exchange that writes them may come and go.
type stream struct {
	id     string
	listen bool // the stream of a subscriptions/listen, which the trunk answers itself at shutdown; set before expect
	open   bool // waiting for its response; guarded by the router's mu
	// unnumbered: its events carry no id (a stateless request's: nothing
	// resumes it); set before it is written.
	unnumbered bool

	mu        sync.Mutex
	events    []event       // kept messages, in order; numbers may skip where some were dropped
	last      int           // the number of the newest message ever added
	bytes     int64         // what events hold
	final     bool          // the response is in: the stream ends once it is written
	ended     bool          // closed without a response (the session ended, or the request was cancelled)
	cancelled bool          // ended because the host cancelled the request
	attached  *attachment   // the HTTP exchange writing it now, nil when none
	sent      int           // the newest number written so far: where a new exchange without Last-Event-ID goes on
	wake      chan struct{} // signals the writer that something changed
	// early, once set (replyEarly), starts the reply of a request answered
	// on its exchange's goroutine when a message comes before the answer;
	// replying is set once the reply is taken, by that start or by
	// takeReply, and replier counts the goroutine that start runs.
	early    earlyReply
	replying bool
	replier  sync.WaitGroup
}

// earlyReply is the exchange a stream's reply is written to when it
// starts before the request is answered (replyEarly).
type earlyReply struct {
	h *Handler
	w http.ResponseWriter
	r *http.Request
	s *session
}

// An event is one kept message of a stream.
type event struct {
	n         int // its number in the stream, from 1: its id is <stream>_<n>
	msg       []byte
	seq       int64 // its arrival in the session: the oldest goes first
	droppable bool  // a notification, which may be dropped; answers and requests may not
}

// keptEvents bounds the messages a stream keeps, whatever their size.
const keptEvents = 512

func newStream(id string) *stream { // numbered: see unnumbered
	return &stream{id: id, wake: make(chan struct{}, 1)}
}

func (st *stream) signal() {
	select {
	case st.wake <- struct{}{}:
	default:
	}
}

// add appends a message; last marks the response, which ends the stream.
// It returns the bytes the stream holds now more: 0 when it takes
// nothing more (answered or ended).
func (st *stream) add(e event, last bool) int64 {
	st.mu.Lock()
	if st.final || st.ended {
		st.mu.Unlock()
		return 0
	}
	st.last++
	e.n = st.last
	st.events = append(st.events, e)
	st.bytes += int64(len(e.msg))
	st.final = last
	early := !last && !st.replying && st.early.h != nil
	if early {
		st.replying = true
		st.replier.Add(1)
	}
	x := st.early
	st.mu.Unlock()
	st.signal()
	if early {
		go func() {
			defer st.replier.Done()
			x.h.reply(x.w, x.r, x.s, st)
		}()
	}
	return int64(len(e.msg))
}

// replyEarly makes the first message other than the response added
// before takeReply start the reply to x's exchange, on a goroutine of its
// own: it must be written while the request still runs. Set before the
// request runs.
func (st *stream) replyEarly(x earlyReply) {
	st.mu.Lock()
	st.early = x
	st.mu.Unlock()
}

// takeReply takes the reply for the caller, the request answered: false
// when replyEarly's goroutine has it already, and then takeReply returns
// once that goroutine has written the reply.
func (st *stream) takeReply() bool {
	st.mu.Lock()
	taken := st.replying
	st.replying = true
	st.mu.Unlock()
	if taken {
		st.replier.Wait()
		return false
	}
	return true
}

// send adds a message that arrived in the session as seq 0: for the tests
// of the stream alone.
func (st *stream) send(msg []byte, last bool) {
	st.add(event{msg: msg, droppable: !last}, last)
}

// oldest is the arrival of the oldest message that may be dropped: one
// already written (written), or else a notification not yet written.
func (st *stream) oldest(written bool) (seq int64, ok bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if i := st.victimLocked(written); i >= 0 {
		return st.events[i].seq, true
	}
	return 0, false
}

func (st *stream) victimLocked(written bool) int {
	for i, e := range st.events {
		if e.n <= st.sent {
			if written {
				return i
			}
			continue
		}
		if written {
			return -1 // what follows was not written either
		}
		if e.droppable {
			return i
		}
	}
	return -1
}

// dropOldest drops what oldest names. freed is its size; lost is true
// when it was a notification the host never got.
func (st *stream) dropOldest(written bool) (freed int64, lost bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	i := st.victimLocked(written)
	if i < 0 {
		return 0, false
	}
	e := st.events[i]
	if i == 0 {
		st.events[0] = event{} // let the message go now, not when the array does
		st.events = st.events[1:]
	} else {
		st.events = append(st.events[:i], st.events[i+1:]...)
		st.events[len(st.events):cap(st.events)][0] = event{}
	}
	st.bytes -= int64(len(e.msg))
	return int64(len(e.msg)), e.n > st.sent
}

// size is what the stream keeps: messages and bytes.
func (st *stream) size() (n int, bytes int64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.events), st.bytes
}

// release lets the kept messages go, returning the bytes they held;
// unwritten notifications among them are counted in lost. keepAnswers
// keeps the answers and requests not yet written, for an exchange that
// may still write them (the session is ending).
func (st *stream) release(keepAnswers bool) (freed int64, lost int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	kept := st.events[:0]
	for _, e := range st.events {
		unwritten := e.n > st.sent
		if keepAnswers && unwritten && !e.droppable {
			kept = append(kept, e)
			continue
		}
		if unwritten && e.droppable {
			lost++
		}
		freed += int64(len(e.msg))
	}
	clear(st.events[len(kept):])
	st.events = kept
	st.bytes -= freed
	return freed, lost
}

// end closes the stream without a response; cancelled says the host
// cancelled its request.
func (st *stream) end(cancelled bool) {
	st.mu.Lock()
	if !st.final && !st.ended {
		st.ended, st.cancelled = true, cancelled
	}
	st.mu.Unlock()
	st.signal()
}

// onlyResponse reports whether the stream holds its response and nothing
// before it: then it can go back as one JSON body. ok is false while
// nothing is decided (no message yet).
func (st *stream) onlyResponse() (msg []byte, only, ok bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.last == 0 && !st.ended {
		return nil, false, false
	}
	if st.final && st.last == 1 && len(st.events) == 1 {
		return st.events[0].msg, true, true
	}
	return nil, false, true
}

// outcome is how the stream ended so far: its response when it is in,
// and whether it ended without one (and because of a cancellation).
func (st *stream) outcome() (response []byte, final, ended, cancelled bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.final && len(st.events) > 0 {
		response = st.events[len(st.events)-1].msg
	}
	return response, st.final, st.ended, st.cancelled
}

// position is where an exchange that names no Last-Event-ID goes on.
func (st *stream) position() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.sent
}

// afterLocked is a copy of the kept events numbered after n.
func (st *stream) afterLocked(n int) []event {
	i := sort.Search(len(st.events), func(i int) bool { return st.events[i].n > n })
	return append([]event(nil), st.events[i:]...)
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

// primeRetry is the reconnection time a priming event asks of the client
// (the SSE retry field): a stream is kept for resumption far longer.
const primeRetry = time.Second

// writeSSE writes the stream's messages after position from as server-sent
// events until the stream ends or the client goes away (ctx). Only one
// exchange writes a stream at a time: takeOver (a resumption) replaces the
// one writing it, otherwise the stream is busy (errStreamBusy). A message
// dropped for the budget is skipped: the event ids that follow say how
// many. With prime, a numbered stream starts with a priming event (SEP-1699:
// an id, the retry time and empty data), so that a client whose connection
// drops before the first message can still resume the stream.
func (st *stream) writeSSE(ctx context.Context, w http.ResponseWriter, from int, done <-chan struct{}, takeOver, prime bool) error {
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
	if prime && !st.unnumbered {
		// Its id names the position before the first message: resuming
		// from it replays the whole stream. The event type is not
		// "message", which clients that do not know priming ignore.
		if _, err := fmt.Fprintf(w, "id: %s\nevent: prime\nretry: %d\ndata: \n\n", st.eventID(from), primeRetry.Milliseconds()); err != nil {
			return err
		}
	}
	if flusher != nil {
		flusher.Flush()
	}
	next := from
	for {
		st.mu.Lock()
		pending := st.afterLocked(next)
		final, ended := st.final, st.ended
		st.mu.Unlock()
		for _, e := range pending {
			next = e.n
			var err error
			if st.unnumbered {
				_, err = fmt.Fprintf(w, "event: message\ndata: %s\n\n", e.msg)
			} else {
				_, err = fmt.Fprintf(w, "id: %s\nevent: message\ndata: %s\n\n", st.eventID(next), e.msg)
			}
			if err != nil {
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
			caughtUp := len(st.afterLocked(next)) == 0
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
