// Package httpserve serves the trunk over streamable HTTP, so that many
// hosts share one trunk and one instance of each upstream: sessions of the
// 2025 revisions (Mcp-Session-Id from initialize, the GET stream,
// resumption with Last-Event-ID, DELETE) and stateless 2026-07-28
// requests (each its own exchange, its Mcp-* headers checked against its
// body). Each session is a proxy.Session attached to the trunk; this
// package only carries messages between HTTP exchanges and that Session,
// and enforces the listener's rules (guard.go): the token, Origin and
// Host checks, and the limits on bodies, sessions and requests in flight.
package httpserve

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcptrunk/mcptrunk/proxy"
)

// Options configure the handler; zero values take the defaults below.
type Options struct {
	// Path is the MCP endpoint (default "/mcp").
	Path string
	// Token, when set, must come with every request but the health
	// checks as "Authorization: Bearer <token>".
	Token string
	// AllowedOrigins are the browser origins (scheme://host[:port]) that
	// may send requests besides the listener's own; they also get CORS
	// headers. Any other Origin is refused with 403.
	AllowedOrigins []string
	// LoopbackOnly refuses a Host header that does not name this machine
	// (a web page's DNS name rebound to 127.0.0.1): right for a listener
	// bound to a loopback address.
	LoopbackOnly bool
	// MaxBodyBytes bounds a POSTed message (default 4 MiB); a larger one
	// gets 413.
	MaxBodyBytes int64
	// MaxSessions bounds the 2025-era sessions open at once (default 64);
	// an initialize past it gets 503.
	MaxSessions int
	// SessionIdle ends a session with no request and no open stream for
	// this long (default 30 minutes); its id then gets 404.
	SessionIdle time.Duration
	// MaxInFlight bounds a session's requests waiting for an answer
	// (default 64); one more gets 429. Stateless requests share
	// MaxSessions*MaxInFlight.
	MaxInFlight int
	// Ready reports whether the trunk finished its first startup
	// (/readyz); nil is always ready.
	Ready func() bool
	// Logger receives the handler's records; nil discards them.
	Logger *slog.Logger
}

// Defaults of Options.
const (
	DefaultPath         = "/mcp"
	DefaultMaxBodyBytes = 4 << 20
	DefaultMaxSessions  = 64
	DefaultSessionIdle  = 30 * time.Minute
	DefaultMaxInFlight  = 64
)

func (o Options) withDefaults() Options {
	if o.Path == "" {
		o.Path = DefaultPath
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	if o.SessionIdle <= 0 {
		o.SessionIdle = DefaultSessionIdle
	}
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = DefaultMaxInFlight
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Handler is the HTTP downstream of one trunk. The trunk must have been
// told to Share before it started.
type Handler struct {
	trunk  *proxy.Trunk
	opts   Options
	logger *slog.Logger
	root   *http.ServeMux // health checks, then everything behind the guard
	routes *http.ServeMux // what the guard admits to: /mcp and Handle's

	life     context.Context // ends at Close: sessions answer their listens
	stopLife context.CancelFunc
	running  sync.WaitGroup // sessions' Run goroutines, the janitor

	mu       sync.Mutex
	sessions map[string]*session
	closed   bool

	statelessInFlight atomic.Int64 // stateless requests being answered
}

// New returns the handler for t.
func New(t *proxy.Trunk, opts Options) *Handler {
	opts = opts.withDefaults()
	h := &Handler{trunk: t, opts: opts, logger: opts.Logger, root: http.NewServeMux(), routes: http.NewServeMux(), sessions: map[string]*session{}}
	h.life, h.stopLife = context.WithCancel(context.Background())
	h.root.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	h.root.HandleFunc("GET /readyz", h.readyz)
	h.root.Handle("/", h.guard(h.routes))
	h.routes.HandleFunc("POST "+opts.Path, h.post)
	h.routes.HandleFunc("GET "+opts.Path, h.get)
	h.routes.HandleFunc("DELETE "+opts.Path, h.delete)
	h.routes.HandleFunc("OPTIONS "+opts.Path, h.preflight)
	h.running.Add(1)
	go h.janitor()
	return h
}

// Handle adds a route behind the same guard as the MCP endpoint (the
// status page, /metrics).
func (h *Handler) Handle(pattern string, handler http.Handler) { h.routes.Handle(pattern, handler) }

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.root.ServeHTTP(w, r) }

func (h *Handler) readyz(w http.ResponseWriter, _ *http.Request) {
	if h.opts.Ready != nil && !h.opts.Ready() {
		http.Error(w, "starting: the servers have not all started or failed yet", http.StatusServiceUnavailable)
		return
	}
	_, _ = w.Write([]byte("ready\n"))
}

// Close ends every session (their open listens are answered, their
// streams end) and waits for them. Call it before the http.Server's
// Shutdown, which waits for the streams' exchanges.
func (h *Handler) Close() {
	h.mu.Lock()
	h.closed = true
	all := make([]*session, 0, len(h.sessions))
	for _, s := range h.sessions {
		all = append(all, s)
	}
	clear(h.sessions)
	h.mu.Unlock()
	h.stopLife()
	for _, s := range all {
		s.wait(context.Background()) // Run answers the listens, then returns
		s.close()
	}
	h.running.Wait()
}

// session finds an open session by id.
func (h *Handler) session(id string) *session {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sessions[id]
}

// addSession registers a new session unless the limit is reached or the
// handler is closing.
func (h *Handler) addSession() (*session, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed || len(h.sessions) >= h.opts.MaxSessions {
		return nil, false
	}
	s := h.startSession(newSessionID(), false)
	h.sessions[s.id] = s
	return s, true
}

// endSession removes and closes a session.
func (h *Handler) endSession(s *session) {
	h.mu.Lock()
	if h.sessions[s.id] == s {
		delete(h.sessions, s.id)
	}
	h.mu.Unlock()
	s.close()
}

// janitor ends sessions left idle.
func (h *Handler) janitor() {
	defer h.running.Done()
	every := min(h.opts.SessionIdle/4, time.Minute)
	tick := time.NewTicker(max(every, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-h.life.Done():
			return
		case now := <-tick.C:
			h.mu.Lock()
			var idle []*session
			for _, s := range h.sessions {
				if s.idleFor(now) >= h.opts.SessionIdle {
					idle = append(idle, s)
				}
			}
			h.mu.Unlock()
			for _, s := range idle {
				h.logger.Info("session expired", "session", s.id, "idle", h.opts.SessionIdle)
				h.endSession(s)
			}
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
