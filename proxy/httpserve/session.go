package httpserve

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcptrunk/mcptrunk/proxy"
)

// A session is one host on the HTTP downstream: a proxy.Session attached to
// the trunk, reading the messages POSTed to it through a pipe (one line
// each) and writing through a router onto the HTTP streams. Sessions of
// the 2025 revisions live from initialize until DELETE, idle expiry or
// shutdown; a stateless request gets a session of its own for as long as
// it is answered (perRequest).
type session struct {
	id         string
	server     *proxy.Session
	router     *router
	perRequest bool // answers one stateless request: its errors carry their HTTP status (errorStatus)

	inMu sync.Mutex
	in   *io.PipeWriter

	lastUsed atomic.Int64 // unix nanoseconds of the last request
	streams  atomic.Int32 // HTTP exchanges writing its streams now
	seq      atomic.Int64 // names its streams

	closeOnce sync.Once
	done      chan struct{} // closed when the session ends
	ran       chan struct{} // closed when its Run returned
}

// newSessionID is 128 random bits: nobody can guess another's session.
func newSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// startSession attaches a session to the trunk and runs it until close.
func (h *Handler) startSession(id string, perRequest bool) *session {
	pr, pw := io.Pipe()
	s := &session{id: id, router: newRouter(), perRequest: perRequest, in: pw, done: make(chan struct{}), ran: make(chan struct{})}
	s.touch()
	s.server = h.trunk.Attach(pr, s.router, &proxy.SessionOptions{ID: id, PerRequest: perRequest})
	h.running.Add(1)
	go func() {
		defer h.running.Done()
		defer close(s.ran)
		// The session ends when its input does (close); the trunk's own
		// shutdown answers its listens through life.
		if err := s.server.Run(h.life); err != nil {
			h.logger.Debug("session ended", "session", id, "error", err)
		}
		_ = pr.Close()
	}()
	return s
}

func (s *session) touch() { s.lastUsed.Store(time.Now().UnixNano()) }

// idleFor is how long the session has had no request and no open stream.
func (s *session) idleFor(now time.Time) time.Duration {
	if s.streams.Load() > 0 {
		return 0
	}
	return now.Sub(time.Unix(0, s.lastUsed.Load()))
}

// deliver passes one message (a line without its newline) to the
// session's connection.
func (s *session) deliver(line []byte) error {
	s.inMu.Lock()
	defer s.inMu.Unlock()
	if _, err := s.in.Write(line); err != nil {
		return err
	}
	_, err := s.in.Write([]byte{'\n'})
	return err
}

// close ends the session: its input ends, so the connection cancels what
// it is handling, and its streams end.
func (s *session) close() {
	s.closeOnce.Do(func() {
		close(s.done)
		s.inMu.Lock()
		_ = s.in.Close()
		s.inMu.Unlock()
		s.router.endAll()
	})
}

// newStream makes a stream of this session, named so that a Last-Event-ID
// finds it.
func (s *session) newStream() *stream {
	return newStream("s" + itoa(s.seq.Add(1)))
}

// wait blocks until the session's Run returned, or ctx ends.
func (s *session) wait(ctx context.Context) {
	select {
	case <-s.ran:
	case <-ctx.Done():
	}
}
