package httpserve

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/proxy"
)

// A session is one host on the HTTP downstream: a proxy.Session attached to
// the trunk, handed each message POSTed to it (a request run to its answer
// on the POST's goroutine, Handler.answer; anything else, deliver) and
// giving its own to a router, which puts each on the HTTP stream it belongs
// to. Sessions of the 2025 revisions live from initialize until DELETE,
// idle expiry or shutdown; a stateless request gets a session of its own
// for as long as it is answered (perRequest), with no goroutine of its own.
type session struct {
	id         string
	client     string                 // the client's address (host only), for fairness
	caller     caller                 // who opened it, on which profile's endpoint: only that caller's requests there reach it
	token      atomic.Pointer[string] // the caller's newest access token, for the trunk's token exchange only
	tokenMu    sync.Mutex             // serialises replacing token and the claims it carries (noteToken)
	server     runner
	router     *router
	perRequest bool // answers one stateless request: its errors carry their HTTP status (errorStatus)

	lastUsed  atomic.Int64 // unix nanoseconds of the last request
	used      atomic.Bool  // the host sent a request besides initialize, or opened a stream
	finished  atomic.Bool  // the host sent notifications/initialized: its handshake is done
	streams   atomic.Int32 // HTTP exchanges writing its streams now
	seq       atomic.Int64 // names its streams
	closeOnce sync.Once
	done      chan struct{} // closed when the session ends
	ran       chan struct{} // closed when its Run returned (a perRequest session has none: closed at once)
	// setClaims hands the trunk's session the claims of a newer token
	// (noteToken): what it sees follows the caller's current credentials.
	// nil for a runner that takes none (the tests' own).
	setClaims func(map[string]any)
}

// A claimsRunner is a runner whose caller's claims can be replaced
// (proxy.Session.SetClaims).
type claimsRunner interface{ SetClaims(map[string]any) }

// A runner is a session's end in the trunk (a *proxy.Session, or the
// tests' own): Run serves a 2025-era session until Close; Deliver hands
// it one message, Answer one stateless request answered on the caller's
// goroutine; Close cancels what it is handling and returns once nothing
// of it runs.
type runner interface {
	Run(ctx context.Context) error
	Deliver(msg []byte) error
	Answer(ctx context.Context, msg []byte) error
	Close()
}

// attachFunc attaches a session writing to out to the trunk:
// proxy.Trunk.Attach, or the tests' own.
type attachFunc func(out jsonrpc.MessageWriter, opts *proxy.SessionOptions) runner

// newSessionID is 128 random bits: nobody can guess another's session.
func newSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// startSession attaches a session to the trunk; a 2025-era one runs
// until close, on a goroutine of its own.
func (h *Handler) startSession(id, client string, c caller, perRequest bool) *session {
	s := &session{id: id, client: client, caller: c, perRequest: perRequest, done: make(chan struct{}), ran: make(chan struct{})}
	s.router = newRouter(routerConfig{session: id, streamBytes: h.opts.MaxSessionBufferedBytes / 2, sessionBytes: h.opts.MaxSessionBufferedBytes,
		pool: h.pool, logger: h.logger, onDrop: h.countDropped, overflow: func(reason string) {
			h.logger.Warn("session closed: "+reason, "session", id)
			// On a goroutine of its own: this runs within a write of the
			// session's connection, whose handlers close waits for.
			go h.endSession(s, "the session was closed: "+reason)
		}})
	s.touch()
	s.server = h.attach(s.router, &proxy.SessionOptions{ID: id, Subject: c.subject, Claims: c.claims, Profile: c.profile, PerRequest: perRequest, RelatedStreams: !perRequest, AccessToken: s.accessToken})
	if cr, ok := s.server.(claimsRunner); ok {
		s.setClaims = cr.SetClaims
	}
	if perRequest {
		close(s.ran)
		return s
	}
	h.running.Add(1)
	go func() {
		defer h.running.Done()
		defer close(s.ran)
		// The session ends when it is closed; the trunk's own shutdown
		// answers its listens through life.
		if err := s.server.Run(h.life); err != nil {
			h.logger.Debug("session ended", "session", id, "error", err)
		}
	}()
	return s
}

// noteToken keeps the access token a request was admitted with (a): a
// client renews its token during a long session, and exchanges need a
// current one. A token other than the last one also carries the caller's
// current claims, which the session's views are built from from now on
// (the subject and the profile are the session's own: sessionOf saw to
// it).
func (s *session) noteToken(a admitted) {
	raw := a.token
	if raw == "" {
		return
	}
	if p := s.token.Load(); p != nil && *p == raw {
		return // the usual case: the token of the last request
	}
	s.tokenMu.Lock() // the token and the claims kept are of one token
	defer s.tokenMu.Unlock()
	if old := s.token.Swap(&raw); old != nil && *old != raw && s.setClaims != nil {
		s.setClaims(a.caller.claims)
	}
}

// accessToken is the caller's newest access token ("" for none).
func (s *session) accessToken() string {
	if p := s.token.Load(); p != nil {
		return *p
	}
	return ""
}

func (s *session) touch() { s.lastUsed.Store(time.Now().UnixNano()) }

// idleFor is how long the session has had no request and no open stream.
func (s *session) idleFor(now time.Time) time.Duration {
	if s.streams.Load() > 0 {
		return 0
	}
	return now.Sub(time.Unix(0, s.lastUsed.Load()))
}

// errSessionClosed is what a message to a closed session meets.
var errSessionClosed = errors.New("the session has ended")

// deliver hands one message of the host's (not written to again) to the
// session's connection, on the caller's goroutine: a notification or a
// response (a request goes through Handler.answer).
func (s *session) deliver(msg []byte) error {
	select {
	case <-s.done:
		return errSessionClosed
	default:
	}
	if err := s.server.Deliver(msg); err != nil {
		return errSessionClosed
	}
	return nil
}

// close ends the session for reason: its requests still waiting are
// answered with an error naming reason and its streams end; then its
// connection cancels what it is handling and close returns once those
// handlers have.
func (s *session) close(reason string) {
	s.closeOnce.Do(func() {
		s.router.endAll(reason)
		close(s.done)
	})
	s.server.Close()
}

// handshaken reports whether the host finished its handshake (or used the
// session as if it had): such a session is never evicted to admit another.
func (s *session) handshaken() bool { return s.finished.Load() || s.used.Load() }

// newStream makes a stream of this session, named so that a Last-Event-ID
// finds it.
func (s *session) newStream() *stream {
	st := newStream("s" + itoa(s.seq.Add(1)))
	// The stateless revision resumes no stream (SEP-2575): its events
	// carry no id, so a client whose stream breaks (its replica gone)
	// sends its request again rather than asking another replica, which
	// never had the stream, to resume it.
	st.unnumbered = s.perRequest
	return st
}

// wait blocks until the session's Run returned, or ctx ends.
func (s *session) wait(ctx context.Context) {
	select {
	case <-s.ran:
	case <-ctx.Done():
	}
}
