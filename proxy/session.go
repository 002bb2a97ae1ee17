package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/logkey"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/naming"
	"github.com/mcptrunk/mcptrunk/proxy/access"
	"github.com/mcptrunk/mcptrunk/proxy/catalog"
	"github.com/mcptrunk/mcptrunk/proxy/outbox"
	"github.com/mcptrunk/mcptrunk/proxy/relay"
	"github.com/mcptrunk/mcptrunk/proxy/translate"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// Session is one host's connection to the trunk, the trunk's MCP server
// side: it takes the host's messages and gives its own whole (mcptrunk's
// stdin and stdout through the line adapters, or the HTTP downstream's
// exchanges), answers the handshake itself, and hands everything else to
// the Trunk.
type Session struct {
	// fixed at creation
	trunk  *Trunk
	conn   *jsonrpc.Conn
	out    *outbox.Queue // notifications to the host
	logger *slog.Logger

	id         string        // the HTTP session id; "" for stdio
	subject    string        // the caller an access token proved (SessionOptions.Subject)
	profile    string        // SessionOptions.Profile: fixed, as the subject is
	token      func() string // SessionOptions.AccessToken: never logged, never sent upstream
	releaseOwn func()        // ends the session's hold on its own instances (private.go)
	perRequest bool          // one stateless HTTP request (SessionOptions.PerRequest)
	// caller is who it serves, as trunk.policy sees it (proxy/access):
	// the subject, the profile and the claims of the newest access token
	// the caller presented (SetClaims). Every view the session is served
	// is built from it (state.sessionView).
	caller  atomic.Pointer[access.Caller]
	related bool      // SessionOptions.RelatedStreams
	closed  sync.Once // Close's detaching

	initialized atomic.Bool
	listens     *translate.Listens // the host's open subscriptions/listen requests (translate/listen.go)
	subsMu      sync.Mutex
	subs        map[string]bool // shared mode: the namespaced URIs this session subscribed to

	// init2025 is what a 2025 host said at initialize: the facts of each
	// of its requests (theirs come in no request). nil before initialize.
	init2025 atomic.Pointer[hostRequest]
	client   atomic.Value // string: the clientInfo name of a 2025 host's initialize
	// nameBudget is the name budget of the host's names (fitNames): 0
	// for the config's.
	nameBudget atomic.Int32
	// stateless is set once the host sent a request at the stateless
	// revision: its notifications then go through its listens.
	stateless atomic.Bool
	levelMu   sync.Mutex
	level     string // the last _meta logLevel of a stateless request; in shared mode also a 2025 host's setLevel

	// Progress for the requests upstreams send the host (sampling,
	// elicitation, roots): each progressToken is replaced with one the trunk
	// makes up (two upstreams may well pick the same token), and the host's
	// notifications/progress for it go back to the upstream that asked,
	// with its own token. See routeProgress.
	progress relay.Progress[string] // the trunk's tokens on servers' requests -> the server
}

// Serve runs the trunk as an MCP server on in and out until in ends (the
// host closed stdin) or ctx ends, then shuts every upstream down. Nothing
// but protocol messages is written to out.
//
// in is not closed to end its read when ctx ends first: a blocking file's
// read (a stdin) would not return for it. Serve then returns once the
// host's requests being handled, cancelled, have ended (Session.Close),
// which includes writing their answers: an answer blocked on a host that
// reads nothing holds it until the host reads or goes.
func (t *Trunk) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	s := t.Attach(jsonrpc.NewLineReader(jsonrpc.Unclosable(in)), jsonrpc.NewLineWriter(out), &SessionOptions{Profile: t.stdioProfile})
	err := s.Run(ctx)
	return errors.Join(err, t.Close(context.WithoutCancel(ctx)))
}

// The stdio host's bounds on what it leaves unread (jsonrpc.Options
// MaxUnreadBytes and MaxHandled, as an HTTP session's maxInFlight and
// maxSessionBufferedBytes): at most this many of its requests handled at
// once, and no new one started while this many bytes of answers wait for
// it to read; past them the trunk stops reading it until it reads.
// Variables for tests.
var (
	stdioUnreadBytes int64 = 64 << 20
	stdioMaxHandled        = 64
)

// SessionOptions describe a host session other than the stdio host's.
type SessionOptions struct {
	// ID is the session's id on the HTTP downstream, told to observers.
	ID string
	// Subject names the caller an access token proved (HTTP with
	// trunk.http.auth); it goes into the session's log lines, never the
	// token.
	Subject string
	// Claims are all the claims of the caller's access token, for
	// trunk.policy; nil without one.
	Claims map[string]any
	// Profile is the view the session is served (trunk.profiles); "" for
	// the whole trunk.
	Profile string
	// AccessToken, when set, returns the caller's current access token
	// for the trunk, which the trunk exchanges for tokens of servers with
	// per-user credentials (internal/usercreds); it is never logged nor
	// sent to a server.
	AccessToken func() string
	// PerRequest marks a session that carries one stateless request over
	// HTTP: only what concerns that request reaches it (its progress, log
	// messages of the servers it has a call on, its listen's
	// notifications), never a broadcast.
	PerRequest bool
	// RelatedStreams marks a session whose downstream puts each message on
	// the stream of the request it belongs to (HTTP): what a server sends
	// during one of the session's calls is written with that call's id
	// (compact JSON) as its label, to a writer that takes labels
	// (jsonrpc.LabelWriter); the message itself is what the host reads.
	RelatedStreams bool
}

// Attach connects a host session to the trunk: it reads the host's
// messages from in (nil for a session whose messages are handed to it,
// Deliver and Answer) and writes its own to out. Nothing is read before
// Run. The trunk serves any number of sessions at once when Share was
// called; the stdio host is one, over jsonrpc's line adapters.
func (t *Trunk) Attach(in jsonrpc.MessageReader, out jsonrpc.MessageWriter, opts *SessionOptions) *Session {
	if opts == nil {
		opts = &SessionOptions{}
	}
	s := &Session{trunk: t, logger: t.logger, listens: translate.NewListens(), id: opts.ID, subject: opts.Subject, profile: opts.Profile, token: opts.AccessToken, perRequest: opts.PerRequest, related: opts.RelatedStreams}
	s.SetClaims(opts.Claims)
	peer := "host"
	if opts.ID != "" {
		s.logger = t.logger.With("session", opts.ID)
		peer = "session"
	}
	if opts.Subject != "" {
		s.logger = s.logger.With("subject", opts.Subject)
	}
	connOpts := &jsonrpc.Options{Logger: s.logger.With("peer", peer), AnswerInvalid: true}
	if opts.ID == "" && !opts.PerRequest {
		// The stdio host's: what it leaves unread is bounded here; an
		// HTTP session's output goes to its streams, bounded there.
		connOpts.MaxUnreadBytes, connOpts.MaxHandled = stdioUnreadBytes, stdioMaxHandled
	}
	s.conn = jsonrpc.NewConn(in, out, s, connOpts)
	s.setLimits(t.state.Load().cfg.Trunk.MaxMessageBytes)
	s.out = outbox.New(s.conn, func(method string, err error) { t.notifyFailed("", method, err) })
	t.hosts.add(s)
	s.releaseOwn = t.holdOwn(s)
	return s
}

// Run serves the session until its input ends, ctx ends or Close is
// called, then closes it (Close): when it returns, nothing of the session
// runs any more. When ctx ends first the trunk is shutting down: open
// listens are answered first. A stateless request's session has no Run:
// Answer serves its request.
func (s *Session) Run(ctx context.Context) error {
	served := make(chan error, 1)
	go func() { served <- s.conn.Serve() }()
	var err error
	select {
	case err = <-served:
		s.logger.Info("host closed the connection")
	case <-ctx.Done():
		s.logger.Info("shutting down", "reason", context.Cause(ctx))
		s.listens.Shutdown() // open listens are answered first: the trunk is tearing them down
	}
	s.Close()
	return err
}

// Deliver hands the session one message of the host's that its transport
// received (jsonrpc.Conn.Deliver): a request goes to a handler of its own.
// After Close it returns jsonrpc.ErrClosed.
func (s *Session) Deliver(msg []byte) error { return s.conn.Deliver(msg) }

// Answer serves msg, a request of the host's that its transport
// received, on the calling goroutine (jsonrpc.Conn.Answer): its answer is
// written to the session's output when Answer returns, unless the host
// cancelled it. For a session that has no Run (a stateless HTTP request's,
// SessionOptions.PerRequest), ctx's end (the trunk shutting down) answers
// its listen, as Run's does for the others. Close, from another
// goroutine, cancels it.
func (s *Session) Answer(ctx context.Context, msg []byte) error {
	if s.perRequest {
		stop := context.AfterFunc(ctx, s.listens.Shutdown)
		defer stop()
	}
	return s.conn.Answer(msg)
}

// Close ends the session, as go-sdk's ServerSession.Close does: it takes
// no more messages, cancels the requests being handled and waits for
// their handlers and its read loop (jsonrpc.Conn.Close), then detaches it
// from the trunk: it gets nothing more, its subscriptions are given up,
// and the trunk and its upstreams go on for the other sessions. Later
// calls wait as the first does. It must not be called from one of the
// session's own handlers.
func (s *Session) Close() {
	_ = s.conn.Close()
	s.closed.Do(func() {
		t := s.trunk
		t.hosts.remove(s)
		t.kept.Drop(keptOwner{session: s})
		s.releaseSubscriptions()
		s.releaseOwn()
		// The outbox stops last: the announcer may be waiting in it for room
		// that a host that went away will never make.
		s.out.Close()
	})
}

// SetClaims makes claims, those of the access token the caller presented
// last, what the session's views are built from: a token whose claims
// differ from the session's first ones (a group taken away, a role added)
// changes what the session sees and may use at its next request, and
// what reaches it from then on. The subject and the profile stay the
// session's own: the HTTP downstream never lets another subject's request
// reach a session (httpserve's sessionOf).
// A host whose lists now differ for it is sent list_changed for each it
// has been served, as a reload of the rules does (Trunk.announceViews).
func (s *Session) SetClaims(claims map[string]any) {
	c := access.NewCaller(s.subject, claims, s.profile)
	if old := s.caller.Swap(&c); old != nil {
		s.trunk.announceView(s, *old, c)
	}
}

// ID is the session's id ("" for the stdio host).
func (s *Session) ID() string { return s.id }

// HandleRequest answers the handshake and passes every other request on,
// each with the facts of its host request (hostreq.go): from its own _meta
// at the stateless revision, from initialize before it. The result is
// shaped for the request's revision (revision.go).
func (s *Session) HandleRequest(ctx context.Context, req jsonrpc.Request) (json.RawMessage, error) {
	method, params := req.Method, req.Params
	if method == "initialize" {
		if protocol.IsStateless(rawjson.MetaString(params, protocol.MetaProtocolVersion)) {
			return nil, translate.RemovedError(method) // an initialize at the stateless revision
		}
		return s.observe(ctx, req, "", "", func(ctx context.Context) (json.RawMessage, error) { return s.initialize(ctx, params) })
	}
	meta, err := translate.ReadRequestMeta(method, params)
	if err != nil {
		return nil, err
	}
	if len(s.trunk.observers) == 0 {
		return s.handle(ctx, meta, req)
	}
	revision, client := meta.Version, meta.ClientName()
	if revision == "" {
		revision, client = s.host2025().Version, s.client2025()
	}
	return s.observe(ctx, req, revision, client, func(ctx context.Context) (json.RawMessage, error) {
		return s.handle(ctx, meta, req)
	})
}

// handle answers every request but initialize: the host edge makes it
// one value by its revision (request2025, requestStateless), and one path
// serves that value whatever the revision.
func (s *Session) handle(ctx context.Context, meta translate.RequestMeta, req jsonrpc.Request) (json.RawMessage, error) {
	newRequest := s.request2025
	if protocol.IsStateless(meta.Version) {
		newRequest = s.requestStateless
	}
	hr, err := newRequest(ctx, meta, req)
	if err != nil {
		return nil, err
	}
	method, params := req.Method, req.Params
	switch method {
	case protocol.MethodDiscover:
		return s.discover(ctx, hr)
	case protocol.MethodListen:
		return s.listens.Listen(ctx, hr.id, req.Answered(), params, listenSession{s, hr}, s.logger)
	}
	if s.trunk.hosts.shared.Load() {
		// What it answers the stateless revision removed (requestStateless).
		if res, handled, err := s.handleShared(ctx, method, params); handled {
			return res, err
		}
	}
	params, release := s.trunk.hosts.claimProgress(ctx, s, params)
	defer release()
	res, err := s.trunk.handle(ctx, hr, method, params)
	s.out.Flush()
	if err != nil {
		return nil, err
	}
	return hr.result(method, res)
}

// request2025 is a 2025-era host's request as the trunk handles it: the
// facts its host gave at initialize (a server/discover probe's own when
// it names a revision: the answer lists the revisions, and the host falls
// back to initialize). Its revision has no subscriptions/listen.
func (s *Session) request2025(_ context.Context, meta translate.RequestMeta, req jsonrpc.Request) (hostRequest, error) {
	hr := *s.host2025()
	hr.id = req.ID
	switch req.Method {
	case protocol.MethodDiscover:
		if meta.Version != "" {
			hr.HostRequest = translate.HostRequest{Version: meta.Version, Caps: meta.Caps}
		}
	case protocol.MethodListen:
		return hostRequest{}, unsupported(req.Method)
	}
	return hr, nil
}

// requestStateless is a request at the stateless revision as the trunk
// handles it: its facts are its own _meta's, and an upstream at the
// stateless revision is told, in each request made for it, exactly what
// this very request's host can be asked and the log level it asked for
// (none when it named none). There is no handshake: the first request may
// be any, so it starts the upstreams (with its forwarded capabilities)
// unless they are started, and its log level becomes the host's. A method
// the revision removed is refused.
func (s *Session) requestStateless(ctx context.Context, meta translate.RequestMeta, req jsonrpc.Request) (hostRequest, error) {
	s.stateless.Store(true)
	s.fitNames(meta.ClientName())
	hr := hostRequest{HostRequest: translate.HostRequest{Version: meta.Version, Caps: meta.Caps}, session: s, id: req.ID}
	hr.calls = upstream.CallOptions{Caps: hr.ForwardedCaps(), Level: meta.LogLevel, LevelSet: true}
	if err := translate.RemovedError(req.Method); err != nil {
		return hostRequest{}, err
	}
	select {
	case <-s.trunk.started: // the usual case, one channel check
	default:
		s.trunk.Start(hr.calls.Caps, hr.Version)
	}
	s.applyLogLevel(ctx, meta.LogLevel)
	return hr, nil
}

// fitNames fits the names the session is offered to its host, named by
// its clientInfo: a host known to put a prefix of its own before them
// (naming.HostOf) is offered names that fit its model behind that prefix,
// unless the operator gave the prefix exactly (Options.ExactHostPrefix).
// A 2025-era session's names are decided at its initialize; a stateless
// host's by each request's clientInfo, the same for the same host.
func (s *Session) fitNames(client string) {
	s.nameBudget.Store(int32(s.trunk.hostBudget(client)))
}

// hostBudget is the name budget of the names offered the host whose
// clientInfo name is client (naming.HostBudget): 0, the config's, for a
// host not known to prefix, and for every host when the operator gave the
// prefix exactly (Options.ExactHostPrefix).
func (t *Trunk) hostBudget(client string) int {
	if t.exactHostPrefix {
		return 0
	}
	return naming.HostBudget(client)
}

// client2025 is the clientInfo name a 2025 host gave ("" before).
func (s *Session) client2025() string {
	name, _ := s.client.Load().(string)
	return name
}

// host2025 is the facts of a 2025 host's requests (shared: read only).
func (s *Session) host2025() *hostRequest {
	if hr := s.init2025.Load(); hr != nil {
		return hr
	}
	return &hostRequest{session: s}
}

// applyLogLevel makes a stateless request's _meta logLevel, when it
// changed, the host's level, exactly as logging/setLevel does for a
// 2025-era host: every server that logs is told, and one that connects
// later or restarts too. That is for the servers at 2025-11-25, which
// have no level per request; one at the stateless revision gets each
// request's own (hostRequest.calls, set in requestStateless).
func (s *Session) applyLogLevel(ctx context.Context, level string) {
	if level == "" {
		return
	}
	s.levelMu.Lock()
	changed := level != s.level
	s.level = level
	s.levelMu.Unlock()
	if !changed {
		return
	}
	if s.trunk.hosts.shared.Load() {
		if err := s.trunk.applySharedLevel(context.WithoutCancel(ctx)); err != nil {
			s.logger.Warn("applying the host's log level failed", "level", logkey.Clip(level), "error", err)
		}
		return
	}
	params, _ := json.Marshal(map[string]string{"level": level})
	if _, err := s.trunk.Handle(context.WithoutCancel(ctx), "logging/setLevel", params); err != nil {
		s.logger.Warn("applying the host's log level failed", "level", logkey.Clip(level), "error", err)
	}
}

// HandleNotification reacts to the host's notifications.
func (s *Session) HandleNotification(method string, params json.RawMessage) {
	switch method {
	case "notifications/initialized":
		s.initialized.Store(true)
	case "notifications/roots/list_changed":
		if s.stateless.Load() || protocol.IsStateless(rawjson.MetaString(params, protocol.MetaProtocolVersion)) {
			return // removed at the stateless revision: roots come with each request
		}
		for _, c := range s.trunk.clients() {
			_ = c.Notify(method, params) // servers that are not ready miss nothing they asked for
		}
	case "notifications/progress":
		s.forwardProgress(method, params)
	}
}

// Notify and Call make the Session the trunk's Downstream.
// Notify queues (see package outbox); it never waits for the host. For a host at
// the stateless revision, list changes and resource updates go to the
// listens that asked for them (translate/listen.go).
func (s *Session) Notify(method string, params json.RawMessage) error {
	return s.notifyFor("", method, params)
}

// notifyFor is Notify for a notification that belongs to the host's
// request call (its id as compact JSON; "" for none): a downstream that
// routes by it (SessionOptions.RelatedStreams) is handed call beside the
// message.
func (s *Session) notifyFor(call, method string, params json.RawMessage) error {
	if !s.related {
		call = ""
	}
	if s.stateless.Load() {
		if out, routed := s.listens.Route(method, params); routed {
			var errs []error
			for _, p := range out {
				errs = append(errs, s.out.PostFor(call, method, p))
			}
			return errors.Join(errs...)
		}
	}
	return s.out.PostFor(call, method, params)
}

// Call sends the host a request of an upstream's. A host at the stateless revision (one
// that never sent initialize) is never sent a request: its revision has none from server to client. An
// upstream's request during one of its calls reaches it inside the call's
// input_required result (proxy/translate/mrtr_park.go); one outside any call is refused.
func (s *Session) Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return s.callFor(ctx, "", method, params)
}

// callFor is Call for a request that belongs to the host's request call
// (see notifyFor).
func (s *Session) callFor(ctx context.Context, call, method string, params json.RawMessage) (json.RawMessage, error) {
	if s.stateless.Load() && s.init2025.Load() == nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "method %q: the host speaks %s, where a server can ask the client only inside the result of a call", method, protocol.Stateless)
	}
	if s.perRequest {
		// Its exchange carries the answer to its one request and what
		// belongs to it; nothing could carry the host's answer back.
		return nil, fmt.Errorf("sending %s: a stateless request's session cannot wait for an answer from its host", method)
	}
	if !s.related {
		call = ""
	}
	return s.conn.CallFor(ctx, call, method, params)
}

// routeProgress prepares a request from an upstream for the host: when it
// carries _meta.progressToken, the token is replaced with one unique to the
// trunk, and the host's notifications/progress for it are routed back to
// server, with the upstream's token, until release is called (after the
// host's answer: its progress comes before it).
func (s *Session) routeProgress(server string, params json.RawMessage) (json.RawMessage, func()) {
	return s.progress.Claim(server, params)
}

// forwardProgress passes the host's progress for a forwarded request to the
// upstream that sent the request, with that upstream's token. Progress for
// anything else has nowhere to go.
func (s *Session) forwardProgress(method string, params json.RawMessage) {
	server, out, ok := s.progress.Owner(params)
	if !ok {
		s.logger.Debug("progress from the host for no forwarded request")
		return
	}
	c, ok := s.trunk.Fleet().Client(server)
	if !ok {
		return
	}
	if err := c.Notify(method, out); err != nil {
		s.logger.Debug("passing the host's progress on failed", "server", server, "error", err)
	}
}

// initialize starts the upstreams with the part of the host's
// capabilities that upstreams may use through the trunk, and answers once
// they have settled (at most trunk.startupWait, as the first list waits):
// the extensions it declares (MCP Apps, skills, tasks) are those of the
// servers behind it, and a 2025-era host is told them only here.
func (s *Session) initialize(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	host, err := translate.ReadInitialize(params)
	if err != nil {
		return nil, err
	}
	s.logger.Info("host connected", "client", logkey.Clip(host.ClientName), "clientVersion", logkey.Clip(host.ClientVersion), "protocol", host.Version)
	hr := hostRequest{HostRequest: host.HostRequest, session: s}
	s.init2025.Store(&hr)
	s.client.Store(host.ClientName)
	s.fitNames(host.ClientName)
	s.trunk.Start(hr.ForwardedCaps(), hr.Version)
	s.trunk.WaitSettled(ctx)
	return json.Marshal(map[string]any{
		"protocolVersion": host.Version,
		"capabilities":    translate.InitializeCapabilities(s.readyInView()),
		"serverInfo":      map[string]string{"name": "mcptrunk", "version": s.trunk.version},
	})
}

// setLimits bounds the host's connection both ways by
// trunk.maxMessageBytes: nothing larger is written, and a longer line from
// the host is answered -32600 and never forwarded, nor held whole while
// read.
func (s *Session) setLimits(n int) {
	s.conn.SetMaxMessageBytes(n, catalog.LimitSetting)
	s.conn.SetMaxReadBytes(n, catalog.LimitSetting)
}
