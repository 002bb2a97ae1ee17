package proxy

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/proxy/translate"
)

// Sharing: one instance of each upstream serves every host session. What
// the upstream protocol keeps once per connection, the log level and the
// resource subscriptions, is kept per session here and given to the
// upstream as the union: the most verbose level any session asked for
// (each session then gets only the messages at its own level), and one
// upstream subscription per URI, however many sessions subscribed.

// Share makes the trunk serve several host sessions at once (the HTTP
// downstream). Call it before Start and before any session attaches.
func (t *Trunk) Share() { t.hosts.shared.Store(true) }

// handleShared answers, in shared mode, the requests of a 2025-era session
// whose effect upstream is shared with every other session.
func (s *Session) handleShared(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, bool, error) {
	switch method {
	case "logging/setLevel":
		level, err := rawjson.StringField(params, "level")
		if err != nil || !protocol.KnownLevel(level) {
			return nil, true, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "logging/setLevel: params.level must be one of %s", strings.Join(protocol.LogLevels, ", "))
		}
		s.levelMu.Lock()
		s.level = level
		s.levelMu.Unlock()
		if err := s.trunk.applySharedLevel(ctx); err != nil {
			return nil, true, err
		}
		return json.RawMessage(`{}`), true, nil
	case "resources/subscribe", "resources/unsubscribe":
		uri, err := rawjson.StringField(params, "uri")
		if err != nil || uri == "" {
			return nil, true, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "%s: params.uri must be a resource URI", method)
		}
		if method == "resources/subscribe" {
			err = s.subscribe(ctx, uri)
		} else {
			err = s.unsubscribe(ctx, uri)
		}
		if err != nil {
			return nil, true, err
		}
		return json.RawMessage(`{}`), true, nil
	}
	return nil, false, nil
}

// ownLevel is the level this session asked for ("" when none).
func (s *Session) ownLevel() string {
	s.levelMu.Lock()
	defer s.levelMu.Unlock()
	return s.level
}

// wantsLog reports whether a log message of server at level goes to this
// session. Never when its view does not show server (sees). A session
// that asked for no level gets every message, as a host alone does; a
// stateless request's session gets the messages of the servers it has a
// call on, at the level it named, and only when it named one.
func (s *Session) wantsLog(server, level string) bool {
	if !s.sees(server) {
		return false
	}
	own := s.ownLevel()
	if s.perRequest && (own == "" || !s.trunk.hosts.busyOn(s, server)) {
		return false
	}
	return own == "" || protocol.LevelRank(level) >= protocol.LevelRank(own)
}

// sees reports whether the session's view shows server (the caller may
// use an item of it: catalog.Catalog.Shows): nothing a server sends on its
// own reaches a caller it is hidden from, who hears of it what it hears of
// a server that does not exist, nothing.
func (s *Session) sees(server string) bool {
	return s.trunk.state.Load().view(s).Shows(server)
}

// wantsUpdate reports whether notifications/resources/updated for uri goes
// to this session: one it subscribed to (a stateless host's listens decide
// in Notify) that its caller's view admits now, its credentials having
// perhaps changed since.
func (s *Session) wantsUpdate(uri string) bool {
	if !s.stateless.Load() {
		s.subsMu.Lock()
		subscribed := s.subs[uri]
		s.subsMu.Unlock()
		if !subscribed {
			return false
		}
	}
	view := s.trunk.state.Load().view(s)
	if !view.Restricted() {
		return true
	}
	_, _, err := admitURI(view, "resource", uri)
	return err == nil
}

// applySharedLevel tells the upstreams the most verbose level any session
// asked for, when that changed. With no session asking, the level stays
// as it was: MCP has no way to take a level back.
func (t *Trunk) applySharedLevel(ctx context.Context) error {
	t.levelMu.Lock()
	defer t.levelMu.Unlock()
	most := ""
	for _, s := range t.hosts.all() {
		if l := s.ownLevel(); l != "" && (most == "" || protocol.LevelRank(l) < protocol.LevelRank(most)) {
			most = l
		}
	}
	if most == "" || most == t.sharedLevel {
		return nil
	}
	params, _ := json.Marshal(map[string]string{"level": most})
	if _, err := t.Handle(ctx, "logging/setLevel", params); err != nil {
		return err
	}
	t.sharedLevel = most
	return nil
}

// subscribe records a session's subscription and takes its share of the
// upstream one. A server of the session's own is subscribed directly.
func (s *Session) subscribe(ctx context.Context, uri string) error {
	if s.trunk.perSessionURI(uri) {
		_, err := s.trunk.handle(ctx, *s.host2025(), "resources/subscribe", translate.URIParams(uri))
		return err
	}
	s.subsMu.Lock()
	if s.subs[uri] {
		s.subsMu.Unlock()
		return nil
	}
	if s.subs == nil {
		s.subs = map[string]bool{}
	}
	s.subs[uri] = true
	s.subsMu.Unlock()
	if err := s.trunk.acquireSubscription(ctx, *s.host2025(), uri); err != nil {
		s.subsMu.Lock()
		delete(s.subs, uri)
		s.subsMu.Unlock()
		return err
	}
	return nil
}

func (s *Session) unsubscribe(ctx context.Context, uri string) error {
	if s.trunk.perSessionURI(uri) {
		_, err := s.trunk.handle(ctx, *s.host2025(), "resources/unsubscribe", translate.URIParams(uri))
		return err
	}
	s.subsMu.Lock()
	had := s.subs[uri]
	delete(s.subs, uri)
	s.subsMu.Unlock()
	if had {
		s.trunk.releaseSubscription(uri, false)
	}
	return nil
}

// releaseSubscriptions gives up every subscription of a session that
// ended.
func (s *Session) releaseSubscriptions() {
	s.subsMu.Lock()
	uris := make([]string, 0, len(s.subs))
	for uri := range s.subs {
		uris = append(uris, uri)
	}
	s.subs = nil
	s.subsMu.Unlock()
	for _, uri := range uris {
		s.trunk.releaseSubscription(uri, false)
	}
}

// acquireSubscription subscribes upstream to a namespaced URI unless a
// share of it is held (relay.Shares). Every holder is admitted by its own
// view first: a URI hidden from the caller of request hr is refused as a
// missing one is, whether or not another caller holds it.
func (t *Trunk) acquireSubscription(ctx context.Context, hr hostRequest, uri string) error {
	t.waitSettled(ctx)
	if _, _, err := admitURI(t.state.Load().view(hr.session), "resource", uri); err != nil {
		return err
	}
	return t.subs.Acquire(uri, func() error {
		_, err := t.handle(ctx, hr, "resources/subscribe", translate.URIParams(uri))
		return err
	})
}

// releaseSubscription gives up one share, and the upstream subscription
// with the last, unless quiet: while the trunk shuts down there is nothing
// to end, the upstreams are closing.
func (t *Trunk) releaseSubscription(uri string, quiet bool) {
	t.subs.Release(uri, func() {
		if quiet || t.life.Err() != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), subscriptionRelease)
		defer cancel()
		if _, err := t.handle(ctx, hostRequest{HostRequest: translate.HostRequest{Version: protocol.Stateless}}, "resources/unsubscribe", translate.URIParams(uri)); err != nil {
			t.logger.Debug("ending a resource subscription failed", "uri", uri, "error", err)
		}
	})
}

// subscriptionRelease bounds the upstream unsubscribe when a share ends.
const subscriptionRelease = 5 * time.Second

// listenSession is a session as its listens see it (ListenSession), with
// the facts of the listen request (hr).
type listenSession struct {
	s  *Session
	hr hostRequest
}

func (l listenSession) Acquire(ctx context.Context, uri string) error {
	return l.s.trunk.acquireSubscription(ctx, l.hr, uri)
}

func (l listenSession) Release(uri string, shutdown bool) {
	l.s.trunk.releaseSubscription(uri, shutdown)
}

func (l listenSession) WatchTask(ctx context.Context, id string) (func(), <-chan error, error) {
	return l.s.trunk.watchTask(ctx, l.hr, id)
}

func (l listenSession) CheckSize(size int) error { return l.s.conn.CheckSize(size) }

func (l listenSession) Push(method string, params json.RawMessage, size int) error {
	return l.s.out.Push(method, params, size)
}
