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
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/accesstoken"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/proxy"
)

// Options configure the handler; zero values take the defaults below.
type Options struct {
	// Path is the MCP endpoint (default "/mcp").
	Path string
	// Token, when set, must come with every request but the health
	// checks as "Authorization: Bearer <token>".
	Token string
	// Auth, when set, admits requests by the access tokens of an OAuth
	// authorization server besides Token, binds each session to the
	// token's subject, and serves the protected resource metadata.
	Auth *accesstoken.Verifier
	// Operator decides whether a caller Auth admitted may read the
	// operators' routes (Handle: the status page, /events, /metrics); nil
	// admits none. Requests with Token, and every request when Auth is
	// not set, are the operator's.
	Operator func(subject string, claims map[string]any) bool
	// Profiles reports whether a profile of that name is configured
	// (trunk.profiles): each is served at <Path>/p/<name>. Nil: none.
	Profiles func(name string) bool
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
	// IdleTimeout closes a keep-alive connection with no request for this
	// long (default 1 minute).
	IdleTimeout time.Duration
	// MaxConns bounds the connections open at once (default 512), and
	// MaxConnsPerClient those of one client address (default half of
	// MaxConns; all of them on a loopback listener). See Listener.
	MaxConns          int
	MaxConnsPerClient int
	// BodyTimeout bounds the reading of a POSTed body (default 30s): a
	// client that sends it slowly gets 408 and its connection ends.
	BodyTimeout time.Duration
	// MaxSessions bounds the 2025-era sessions open at once (default 64);
	// an initialize past it gets 503.
	MaxSessions int
	// MaxSessionsPerClient bounds the sessions of one client address, so
	// that one cannot take every slot while another waits (default half
	// of MaxSessions; MaxSessions on a loopback listener, where every
	// host has the same address).
	MaxSessionsPerClient int
	// SessionIdle ends a session with no request and no open stream for
	// this long (default 30 minutes); its id then gets 404.
	SessionIdle time.Duration
	// HandshakeIdle is SessionIdle for a session not yet used: one whose
	// host sent no request but initialize and opened no stream (default
	// 15 seconds). Bare initialize requests cannot fill the table.
	HandshakeIdle time.Duration
	// MaxInFlight bounds a session's requests waiting for an answer
	// (default 64); one more gets 429. Stateless requests share
	// MaxSessions*MaxInFlight.
	MaxInFlight int
	// MaxBufferedBytes bounds what all sessions together keep for their
	// hosts to read (default 256 MiB; budget.go).
	MaxBufferedBytes int64
	// MaxSessionBufferedBytes bounds what one session keeps (default a
	// quarter of MaxBufferedBytes); one stream keeps at most half of
	// it.
	MaxSessionBufferedBytes int64
	// Dropped counts notifications dropped for the budgets; nil counts
	// them in the trunk's droppedNotifications.
	Dropped func(n int)
	// Ready reports whether the trunk finished its first startup
	// (/readyz); nil is always ready.
	Ready func() bool
	// Degraded says what the trunk serves without now ("" for nothing):
	// a part whose loss leaves it ready, such as a state store every
	// replica shares, which /readyz names in its body without failing
	// (a balancer would otherwise take every replica out at once).
	Degraded func() string
	// Logger receives the handler's records; nil discards them.
	Logger *slog.Logger
}

// Defaults of Options.
const (
	DefaultPath             = "/mcp"
	defaultMaxBodyBytes     = 4 << 20
	defaultBodyTimeout      = 30 * time.Second
	defaultIdleTimeout      = time.Minute
	defaultMaxConns         = 512
	defaultMaxSessions      = 64
	defaultSessionIdle      = 30 * time.Minute
	defaultHandshakeIdle    = 15 * time.Second
	defaultMaxInFlight      = 64
	DefaultMaxBufferedBytes = 256 << 20
)

func (o Options) withDefaults() Options {
	if o.Path == "" {
		o.Path = DefaultPath
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = defaultMaxBodyBytes
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = defaultIdleTimeout
	}
	if o.MaxConns <= 0 {
		o.MaxConns = defaultMaxConns
	}
	o.MaxConnsPerClient = perClient(o.MaxConnsPerClient, o.MaxConns, o.LoopbackOnly)
	if o.BodyTimeout <= 0 {
		o.BodyTimeout = defaultBodyTimeout
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = defaultMaxSessions
	}
	o.MaxSessionsPerClient = perClient(o.MaxSessionsPerClient, o.MaxSessions, o.LoopbackOnly)
	if o.SessionIdle <= 0 {
		o.SessionIdle = defaultSessionIdle
	}
	if o.HandshakeIdle <= 0 {
		o.HandshakeIdle = defaultHandshakeIdle
	}
	o.HandshakeIdle = min(o.HandshakeIdle, o.SessionIdle)
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = defaultMaxInFlight
	}
	if o.MaxBufferedBytes <= 0 {
		o.MaxBufferedBytes = DefaultMaxBufferedBytes
	}
	if o.MaxSessionBufferedBytes <= 0 {
		o.MaxSessionBufferedBytes = o.MaxBufferedBytes / 4
	}
	o.MaxSessionBufferedBytes = min(o.MaxSessionBufferedBytes, o.MaxBufferedBytes)
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// perClient is a limit per client address, n, or its default for a total
// limit: half of it, so that one address cannot take it all while another
// waits, or all of it on a loopback listener, where every host has the
// same address.
func perClient(n, total int, loopback bool) int {
	switch {
	case n > 0:
		return n
	case loopback:
		return total
	}
	return max(total/2, 1)
}

// Handler is the HTTP downstream of one trunk. The trunk must have been
// told to Share before it started.
type Handler struct {
	trunk  *proxy.Trunk
	attach attachFunc
	opts   Options
	logger *slog.Logger
	pool   *pool          // the budget of every session together
	root   *http.ServeMux // health checks, then everything behind the guard
	routes *http.ServeMux // what the guard admits to: /mcp and Handle's

	life     context.Context // ends at Close: sessions answer their listens
	stopLife context.CancelFunc
	running  sync.WaitGroup // sessions' Run goroutines, the janitor

	mu         sync.Mutex
	sessions   map[string]*session
	perRequest map[*session]struct{} // the stateless requests' sessions
	closed     bool

	statelessInFlight atomic.Int64 // stateless requests being answered
}

// New returns the handler for t.
func New(t *proxy.Trunk, opts Options) *Handler {
	if opts.Dropped == nil {
		opts.Dropped = t.CountDropped
	}
	h := newHandler(t, func(out jsonrpc.MessageWriter, o *proxy.SessionOptions) runner { return t.Attach(nil, out, o) }, opts)
	h.root.Handle("GET /oauth/", t.SignIn()) // a browser's, without the trunk's token: its own checks (proxy/signin)
	return h
}

// newHandler is New with the sessions attached by attach.
func newHandler(t *proxy.Trunk, attach attachFunc, opts Options) *Handler {
	opts = opts.withDefaults()
	h := &Handler{trunk: t, attach: attach, opts: opts, logger: opts.Logger, pool: newPool(opts.MaxBufferedBytes),
		root: http.NewServeMux(), routes: http.NewServeMux(), sessions: map[string]*session{}, perRequest: map[*session]struct{}{}}
	h.life, h.stopLife = context.WithCancel(context.Background())
	h.root.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	h.root.HandleFunc("GET /readyz", h.readyz)
	h.root.Handle("/", h.guard(h.dispatch))
	h.serveResourceMetadata()
	h.routes.Handle("POST "+opts.Path, route(h.post))
	h.routes.Handle("GET "+opts.Path, route(h.get))
	h.routes.Handle("DELETE "+opts.Path, route(h.delete))
	h.routes.HandleFunc("OPTIONS "+opts.Path, h.preflight)
	h.routes.Handle(opts.Path+"/p/{profile}", route(h.profiled))
	h.running.Add(1)
	go h.janitor()
	return h
}

// A route serves a request the guard admitted, given what the guard
// established of it. Routes are kept in Handler.routes, for its patterns,
// and reached through Handler.dispatch, which hands them the admission.
type route func(w http.ResponseWriter, r *http.Request, a admitted)

// ServeHTTP refuses: a route reached other than through the guard has no
// admission, and a zero one would make its request nobody's.
func (route) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	http.Error(w, "forbidden: the request was not admitted", http.StatusForbidden)
}

// dispatch serves an admitted request by what Handler.routes picks for
// it: a route, handed a; the mux's own answers (404, 405) and the plain
// handlers there (the preflight) as net/http would. An operators' route
// (Handle) answers only an operator, and is then served by the mux (which
// picks it again), so that its handler sees the pattern's path values.
func (h *Handler) dispatch(w http.ResponseWriter, r *http.Request, a admitted) {
	switch next, _ := h.routes.Handler(r); rt := next.(type) {
	case route:
		rt(w, r, a)
	case operatorRoute:
		if !h.operator(a) {
			http.Error(w, "forbidden: this page is for the trunk's operators (trunk.policy.operators)", http.StatusForbidden)
			return
		}
		h.routes.ServeHTTP(w, r)
	default:
		next.ServeHTTP(w, r)
	}
}

// profiled serves a profile's endpoint as the trunk's own is served, the
// profile riding in the caller (a); an unknown profile is 404.
func (h *Handler) profiled(w http.ResponseWriter, r *http.Request, a admitted) {
	if !h.hasProfile(a.caller.profile) {
		http.NotFound(w, r)
		return
	}
	switch r.Method {
	case http.MethodPost:
		h.post(w, r, a)
	case http.MethodGet:
		h.get(w, r, a)
	case http.MethodDelete:
		h.delete(w, r, a)
	case http.MethodOptions:
		h.preflight(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE, OPTIONS")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

// Handle adds an operators' route (the status page, /events, /metrics)
// behind the same guard as the MCP endpoint. What it serves is the whole
// trunk's, every server and every caller's calls, so with access tokens
// (Options.Auth) it answers only operators: the static token, or a caller
// Options.Operator admits; any other caller gets 403 naming
// trunk.policy.operators. Without Auth the listener has one operator,
// whoever the guard admits. handler sees the request as a ServeMux's
// would, with pattern's path values.
func (h *Handler) Handle(pattern string, handler http.Handler) {
	h.routes.Handle(pattern, operatorRoute{handler})
}

// An operatorRoute is a handler Handle added: Handler.dispatch lets the
// mux serve it only to an operator.
type operatorRoute struct{ http.Handler }

// operator reports whether an admitted request is an operator's (Handle).
func (h *Handler) operator(a admitted) bool {
	if h.opts.Auth == nil || a.staticToken {
		return true
	}
	c := a.caller
	return c.subject != "" && h.opts.Operator != nil && h.opts.Operator(c.subject, c.claims)
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.root.ServeHTTP(w, r) }

func (h *Handler) readyz(w http.ResponseWriter, _ *http.Request) {
	if h.opts.Ready != nil && !h.opts.Ready() {
		http.Error(w, "starting: the servers have not all started or failed yet", http.StatusServiceUnavailable)
		return
	}
	msg := "ready\n"
	if h.opts.Degraded != nil {
		if d := h.opts.Degraded(); d != "" {
			msg += "degraded: " + d + "\n"
		}
	}
	_, _ = w.Write([]byte(msg))
}

// Close ends every session (their requests in flight answered with an
// error that says the trunk is shutting down, their open listens as the
// trunk answers them, their streams ended) and waits for them. Call it
// before the http.Server's Shutdown, which waits for the streams'
// exchanges.
func (h *Handler) Close() {
	h.mu.Lock()
	h.closed = true
	all := make([]*session, 0, len(h.sessions))
	for _, s := range h.sessions {
		all = append(all, s)
	}
	clear(h.sessions)
	for s := range h.perRequest {
		s.router.answerAll(reasonShutdown)
	}
	h.mu.Unlock()
	for _, s := range all {
		s.router.answerAll(reasonShutdown)
	}
	h.stopLife()
	for _, s := range all {
		s.wait(context.Background()) // Run answers the listens, then returns
		s.close(reasonShutdown)
	}
	h.running.Wait()
}

// session finds an open session by id.
func (h *Handler) session(id string) *session {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sessions[id]
}

// reasonShutdown is why requests in flight at shutdown are not answered.
const reasonShutdown = "mcptrunk is shutting down"

// addSession registers a new session for a client, unless a limit is
// reached (refused says which) or the handler is closing. At a limit, the
// least recently used session under it that never finished its handshake
// makes room: bare initializes cannot keep hosts out, and a host that
// finished its handshake is never evicted for one.
func (h *Handler) addSession(client string, c caller) (s *session, refused string) {
	var evicted *session
	defer func() {
		if evicted != nil {
			h.logger.Info("session evicted: the session table was full and it never finished its handshake", "session", evicted.id)
			evicted.close(reasonEvicted)
		}
	}()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, reasonShutdown
	}
	n := 0
	for _, o := range h.sessions {
		if o.client == client {
			n++
		}
	}
	atClient, atTable := n >= h.opts.MaxSessionsPerClient, len(h.sessions) >= h.opts.MaxSessions
	if atClient || atTable {
		among := func(*session) bool { return true }
		if atClient { // one of its own frees its place and the table's
			among = func(o *session) bool { return o.client == client }
		}
		if evicted = h.evictUnfinishedLocked(among); evicted == nil {
			if atClient {
				return nil, fmt.Sprintf("too many sessions from this address: one client address may hold %d at once (trunk.http.maxSessionsPerClient)", h.opts.MaxSessionsPerClient)
			}
			return nil, fmt.Sprintf("too many sessions: mcptrunk serves at most %d at once (trunk.http.maxSessions)", h.opts.MaxSessions)
		}
	}
	s = h.startSession(newSessionID(), client, c, false)
	h.sessions[s.id] = s
	return s, ""
}

// reasonEvicted ends a session that made room for a new one.
const reasonEvicted = "the session never finished its handshake and made room for a new one"

// evictUnfinishedLocked removes from the table, and returns, the least
// recently used session of those among that never finished its
// handshake; nil when there is none. The caller closes it without h.mu.
func (h *Handler) evictUnfinishedLocked(among func(*session) bool) *session {
	var oldest *session
	for _, o := range h.sessions {
		if o.handshaken() || !among(o) {
			continue
		}
		if oldest == nil || o.lastUsed.Load() < oldest.lastUsed.Load() {
			oldest = o
		}
	}
	if oldest != nil {
		delete(h.sessions, oldest.id)
	}
	return oldest
}

// endSession removes and closes a session for reason.
func (h *Handler) endSession(s *session, reason string) {
	h.mu.Lock()
	if h.sessions[s.id] == s {
		delete(h.sessions, s.id)
	}
	h.mu.Unlock()
	s.close(reason)
}

// countDropped counts notifications dropped for the budgets.
func (h *Handler) countDropped(n int) {
	if h.opts.Dropped != nil {
		h.opts.Dropped(n)
	}
}

// janitor ends sessions left idle: SessionIdle, or HandshakeIdle for a
// session never used.
func (h *Handler) janitor() {
	defer h.running.Done()
	every := min(h.opts.HandshakeIdle/4, time.Minute)
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
				if s.idleFor(now) >= h.idleLimit(s) {
					idle = append(idle, s)
				}
			}
			h.mu.Unlock()
			for _, s := range idle {
				h.logger.Info("session expired", "session", s.id, "idle", h.idleLimit(s), "used", s.used.Load())
				h.endSession(s, "the session expired")
			}
		}
	}
}

// idleLimit is how long s may stay idle.
func (h *Handler) idleLimit(s *session) time.Duration {
	if s.used.Load() {
		return h.opts.SessionIdle
	}
	return h.opts.HandshakeIdle
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
