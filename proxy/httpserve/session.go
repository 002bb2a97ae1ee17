package httpserve

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
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
	client     string                 // the client's address (host only), for fairness
	caller     caller                 // who opened it, on which profile's endpoint: only that caller's requests there reach it
	token      atomic.Pointer[string] // the caller's newest access token, for the trunk's token exchange only
	tokenMu    sync.Mutex             // serialises replacing token and the claims it carries (noteToken)
	router     *router
	perRequest bool // answers one stateless request: its errors carry their HTTP status (errorStatus)

	inMu sync.Mutex
	in   *io.PipeWriter
	out  *io.PipeReader // the other end of in: closed first, so that a blocked deliver returns

	lastUsed  atomic.Int64 // unix nanoseconds of the last request
	used      atomic.Bool  // the host sent a request besides initialize, or opened a stream
	finished  atomic.Bool  // the host sent notifications/initialized: its handshake is done
	streams   atomic.Int32 // HTTP exchanges writing its streams now
	seq       atomic.Int64 // names its streams
	closeOnce sync.Once
	done      chan struct{} // closed when the session ends
	ran       chan struct{} // closed when its Run returned
	// cancel ends what a perRequest session's connection is handling
	// (its request runs on the read loop, which does not see the input
	// end): nil for a runner that has no such method.
	cancel func()
	// direct hands a 2025-era session's messages to its connection on the
	// POST's own goroutine (see deliver); nil: through the pipe.
	direct func(line []byte) error
	// setClaims hands the trunk's session the claims of a newer token
	// (noteToken): what it sees follows the caller's current credentials.
	// nil for a runner that takes none (the tests' own).
	setClaims func(map[string]any)
}

// A claimsRunner is a runner whose caller's claims can be replaced
// (proxy.Session.SetClaims).
type claimsRunner interface{ SetClaims(map[string]any) }

// A runner is a session's connection to the trunk (a *proxy.Session).
type runner interface{ Run(context.Context) error }

// A connRunner is a runner whose connection to the trunk can be fed and
// cancelled from outside (proxy.Session.Conn): the tests' own runners
// have none.
type connRunner interface{ Conn() *jsonrpc.Conn }

// attachFunc attaches a session to the trunk: proxy.Trunk.Attach, or the
// tests' own.
type attachFunc func(in io.Reader, out io.Writer, opts *proxy.SessionOptions) runner

// newSessionID is 128 random bits: nobody can guess another's session.
func newSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// startSession attaches a session to the trunk and runs it until close.
func (h *Handler) startSession(id, client string, c caller, perRequest bool) *session {
	pr, pw := io.Pipe()
	s := &session{id: id, client: client, caller: c, perRequest: perRequest, in: pw, out: pr, done: make(chan struct{}), ran: make(chan struct{})}
	s.router = newRouter(routerConfig{session: id, streamBytes: h.opts.MaxSessionBufferedBytes / 2, sessionBytes: h.opts.MaxSessionBufferedBytes,
		pool: h.pool, logger: h.logger, onDrop: h.countDropped, overflow: func(reason string) {
			h.logger.Warn("session closed: "+reason, "session", id)
			h.endSession(s, "the session was closed: "+reason)
		}})
	s.touch()
	server := h.attach(pr, s.router, &proxy.SessionOptions{ID: id, Subject: c.subject, Claims: c.claims, Profile: c.profile, PerRequest: perRequest, AccessToken: s.accessToken})
	if cr, ok := server.(claimsRunner); ok {
		s.setClaims = cr.SetClaims
	}
	if cr, ok := server.(connRunner); ok && perRequest {
		s.cancel = cr.Conn().CancelRequests
	} else if ok {
		s.direct = cr.Conn().Deliver
	}
	h.runners.Go(func() {
		defer close(s.ran)
		// The session ends when its input does (close); the trunk's own
		// shutdown answers its listens through life.
		if err := server.Run(h.life); err != nil {
			h.logger.Debug("session ended", "session", id, "error", err)
		}
		_ = pr.Close()
	})
	return s
}

// noteToken keeps the access token r was admitted with: a client renews
// its token during a long session, and exchanges need a current one. A
// token other than the last one also carries the caller's current claims,
// which the session's views are built from from now on (the subject and
// the profile are the session's own: sessionOf saw to it).
func (s *session) noteToken(r *http.Request) {
	raw := rawTokenOf(r)
	if raw == "" {
		return
	}
	if p := s.token.Load(); p != nil && *p == raw {
		return // the usual case: the token of the last request
	}
	s.tokenMu.Lock() // the token and the claims kept are of one token
	defer s.tokenMu.Unlock()
	if old := s.token.Swap(&raw); old != nil && *old != raw && s.setClaims != nil {
		s.setClaims(callerOf(r).claims)
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

// deliver passes one message (a line without its newline, not written to
// again) to the session's connection: on the caller's goroutine when the
// connection takes it so (a 2025-era session: io.Pipe's writer waits for
// the read loop to take each write, two hand-offs per message), else
// through the pipe (a stateless request's session, whose read loop runs
// the request while net/http's goroutine writes the reply).
func (s *session) deliver(line []byte) error {
	if s.direct != nil {
		select {
		case <-s.done:
			return errSessionClosed
		default:
		}
		return s.direct(line)
	}
	// One write, the newline included: each write waits for the read
	// loop to take it.
	framed := append(line[:len(line):len(line)], '\n')
	s.inMu.Lock()
	defer s.inMu.Unlock()
	_, err := s.in.Write(framed)
	return err
}

// close ends the session for reason: its input ends, so the connection
// cancels what it is handling; its requests still waiting are answered
// with an error naming reason, and its streams end.
func (s *session) close(reason string) {
	s.closeOnce.Do(func() {
		_ = s.out.CloseWithError(errSessionClosed)
		s.inMu.Lock()
		_ = s.in.Close()
		s.inMu.Unlock()
		s.router.endAll(reason)
		if s.cancel != nil {
			s.cancel()
		}
		close(s.done)
	})
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
