package proxy

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/naming"
	"github.com/mcptrunk/mcptrunk/upstream"
	"golang.org/x/sync/singleflight"
)

// A server with "scope": "session" keeps state that is one host's, such as
// the roots it was given. With several sessions on the trunk each session
// gets an instance of its own: started at the session's first call to it,
// told that session's capabilities (roots included), sending its
// notifications and requests to that session alone, and stopped when the
// session ends. The shared instance still provides the catalog (names are
// the same for every session); it is never called. Stateless requests, a
// session each for one answer, use the shared instance: their roots come
// inside each call.

// privateServers is one session's own instances.
type privateServers struct {
	mu     sync.Mutex
	fleet  *upstream.Fleet
	closed bool
	starts singleflight.Group
}

// usesPrivate reports whether a request of s to a server of this spec goes
// to s's own instance.
func (t *Trunk) usesPrivate(s *Session, spec config.Spec) bool {
	return s != nil && spec.PerSession() && t.hosts.shared.Load() && !s.perRequest
}

// privateClient returns s's own instance of the server, starting it
// (once, whatever the number of requests waiting) if needed.
func (t *Trunk) privateClient(ctx context.Context, s *Session, spec config.Spec) (*upstream.Client, error) {
	id, err := naming.ServerID(spec.Name)
	if err != nil {
		return nil, err
	}
	p := &s.private
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, jsonrpc.Errorf(jsonrpc.CodeUnavailable, "server %q: the session has ended", id)
	}
	if p.fleet == nil {
		p.fleet = t.newPrivateFleet(s)
	}
	fleet := p.fleet
	p.mu.Unlock()
	if c, ok := fleet.Client(id); ok {
		return c, nil
	}
	v, err, _ := p.starts.Do(id, func() (any, error) {
		if c, ok := fleet.Client(id); ok {
			return c, nil
		}
		s.logger.Info("starting the session's own instance", "server", id)
		// Not the request's ctx: the instance outlives the request that
		// started it, up to the session's end.
		startErr := fleet.Add(context.WithoutCancel(ctx), spec)
		c, ok := fleet.Client(id)
		if !ok {
			return nil, startErr
		}
		if startErr == nil {
			t.tellPrivate(ctx, s, c)
		}
		return c, nil
	})
	if err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeUnavailable, "server %q: the session's own instance could not start: %v", id, err)
	}
	return v.(*upstream.Client), nil
}

// newPrivateFleet makes the set of s's own instances.
func (t *Trunk) newPrivateFleet(s *Session) *upstream.Fleet {
	hr := s.legacyHost()
	return upstream.NewFleet(&upstream.Options{
		Logger:          s.logger,
		Concurrency:     1,
		MaxMessageBytes: t.cfg.Load().Trunk.MaxMessageBytes,
		Version:         t.version,
		Capabilities:    hr.ForwardedCaps(),
		Restart:         t.restart,
		Dial:            t.dial,
		PreferLegacy:    !protocol.IsStateless(hr.Version),
		Events: upstream.Events{
			Changed: func(string) {}, // the catalog is the shared instance's
			Notification: func(server, method string, params json.RawMessage) {
				t.toSession(s, server, method, t.exportNotification(server, method, params))
			},
			Request: func(ctx context.Context, server, method string, params json.RawMessage) (json.RawMessage, error) {
				return t.askSession(ctx, s, server, method, params)
			},
		},
	})
}

// tellPrivate gives a new instance what its session asked of the servers
// so far: the log level.
func (t *Trunk) tellPrivate(ctx context.Context, s *Session, c *upstream.Client) {
	level := s.ownLevel()
	if level == "" || !c.Init().Capabilities.Logging {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	params, _ := json.Marshal(map[string]string{"level": level})
	if _, err := c.Call(ctx, "logging/setLevel", params); err != nil {
		s.logger.Warn("passing the log level on failed", "server", c.Name(), "error", err)
	}
}

// closePrivate stops the session's own instances; none starts after it.
func (s *Session) closePrivate() {
	p := &s.private
	p.mu.Lock()
	p.closed = true
	fleet := p.fleet
	p.mu.Unlock()
	if fleet == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := fleet.Close(ctx); err != nil {
		s.logger.Warn("stopping the session's own servers", "error", err)
	}
}

// toSession delivers a notification of one of s's own instances to s.
func (t *Trunk) toSession(s *Session, server, method string, params json.RawMessage) {
	switch method {
	case "notifications/progress":
		t.toHosts(server, method, params) // the token says whose: s's
		return
	case "notifications/message":
		level, _ := rawjson.StringField(params, "level")
		if !s.wantsLog(server, level) {
			return
		}
	}
	if err := s.Notify(method, params); err != nil {
		t.notifyFailed(server, method, err)
	}
}

// perSessionURI reports whether a namespaced URI belongs to a server
// with "scope": "session": its subscriptions are the session's own, not
// shared.
func (t *Trunk) perSessionURI(uri string) bool {
	server, _, ok := naming.SplitResourceURI(uri)
	if !ok {
		return false
	}
	c, ok := t.Fleet().Client(server)
	return ok && c.Spec().PerSession()
}
