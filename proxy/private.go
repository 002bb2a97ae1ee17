package proxy

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/naming"
	"github.com/mcptrunk/mcptrunk/proxy/signin"
	"github.com/mcptrunk/mcptrunk/proxy/tasks"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// Two kinds of server get instances of their own beside the shared one
// (proxy/instances keeps them):
//
//   - "scope": "session" keeps state that is one host's, such as the roots
//     it was given: with several sessions on the trunk each gets its own,
//     started at its first call, told that session's capabilities, sending
//     its notifications and requests to that session alone, and stopped
//     when the session ends. Stateless requests, a session each for one
//     answer, use the shared instance: their roots come inside each call.
//   - a server with per-user credentials acts as the caller
//     (internal/usercreds): each signed-in caller (subject) gets an
//     instance carrying its credential, shared by its sessions and
//     stateless requests and by no one else's, stopped an idle time after
//     its last session ended. A caller without an identity is refused.
//
// In both, the shared instance still provides the catalog (names are the
// same for everyone) and is never called.

// ownInstance returns the instance of c's server that request hr goes to
// when it is not the shared one, else nil.
func (t *Trunk) ownInstance(ctx context.Context, hr hostRequest, c *upstream.Client) (*upstream.Client, error) {
	s, spec, id := hr.session, c.Spec(), c.Name()
	switch {
	case spec.PerUser():
		if s == nil || s.subject == "" {
			return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "server %q acts as each caller with the caller's own credentials, so it needs a signed-in caller (serve --http with trunk.http.auth, and an access token); this request carries no identity", id)
		}
		if err := t.signIn.Require(ctx, signin.Caller{Subject: s.subject, Session: s.id, Elicitation: hr.Caps["elicitation"], Stateless: hr.Stateless(), Ask: s.Call, Notify: s.Notify}, id); err != nil {
			return nil, err
		}
		return t.perUser.Client(ctx, s.subject, t.callerFleet(s), id, func() (config.Spec, error) { return t.creds.ForSubject(spec, s.subject) },
			func(c *upstream.Client) { t.tellPrivate(ctx, s, c) })
	case spec.PerCaller() && s != nil && s.subject != "":
		return t.perUser.Client(ctx, s.subject, t.callerFleet(s), id, func() (config.Spec, error) { return spec, nil }, func(c *upstream.Client) { t.tellPrivate(ctx, s, c) })
	case s != nil && (spec.PerSession() || spec.PerCaller()) && t.hosts.shared.Load() && !s.perRequest:
		return t.own.Client(ctx, s, t.sessionFleet(s), id, func() (config.Spec, error) { return spec, nil }, func(c *upstream.Client) { t.tellPrivate(ctx, s, c) })
	}
	return nil, nil
}

// holdOwn keeps s's own instances, and its caller's, while s runs.
func (t *Trunk) holdOwn(s *Session) func() {
	release := t.own.Hold(s)
	if s.subject == "" {
		return release
	}
	releaseUser := t.perUser.Hold(s.subject)
	return func() { release(); releaseUser() }
}

// initPools sets up the pools of own instances (the Trunk's zero pools).
func (t *Trunk) initPools() {
	t.own.Whose, t.own.Logger = "the session's", t.logger
	t.perUser.Whose, t.perUser.Logger = "the caller's", t.logger
	t.perUser.Idle = func() time.Duration { return t.state.Load().cfg.Trunk.CallerIdle() }
	t.perUser.Closed = t.creds.Forget
}

// sessionFleet makes session s's fleet of own instances: told s's host's
// capabilities, their notifications and requests go to s alone.
func (t *Trunk) sessionFleet(s *Session) func() *upstream.Fleet {
	return func() *upstream.Fleet {
		return t.ownFleet(s.logger, *s.host2025(), func(server, method string, params json.RawMessage) {
			t.toSession(s, t.ownCall(s, server), server, method, t.exportNotification(server, method, params))
		}, func(ctx context.Context, server, method string, params json.RawMessage) (json.RawMessage, error) {
			return t.askSession(ctx, s, t.ownCall(s, server), server, method, tasks.Relate(params, t.sessionTaskIDs(s, server)))
		}, nil)
	}
}

// callerFleet makes the fleet of own instances of the caller of session
// first, whose request needs the caller's first instance: told first's host's
// capabilities, they act with the caller's credentials, and what they
// send goes to the caller's sessions alone.
func (t *Trunk) callerFleet(first *Session) func() *upstream.Fleet {
	return func() *upstream.Fleet {
		subject := first.subject
		mine := func(s *Session) bool { return s.subject == subject }
		return t.ownFleet(t.logger.With("subject", subject), *first.host2025(), func(server, method string, params json.RawMessage) {
			params = t.exportNotification(server, method, params)
			switch method {
			case "notifications/progress":
				t.toHosts(server, method, params) // its token says whose
				return
			case "notifications/resources/updated":
				for _, s := range t.hosts.all() {
					if mine(s) {
						t.toSession(s, "", server, method, params)
					}
				}
				return
			}
			// Anything else, as on a shared instance, concerns the one
			// session of the caller's with calls on the server.
			t.toConcerned(server, method, params, mine)
		}, func(ctx context.Context, server, method string, params json.RawMessage) (json.RawMessage, error) {
			s, call, busy := t.hosts.concerned(server, params, mine)
			if s == nil {
				return nil, unattributedRequest(server, method, subject, busy)
			}
			return t.askSession(ctx, s, call, server, method, tasks.Relate(params, t.sessionTaskIDs(s, server)))
		}, func(ctx context.Context, server, refused string) (string, error) {
			return t.creds.Authorization(ctx, subject, server, refused, func() string { return t.inboundToken(subject) })
		})
	}
}

// inboundToken is subject's access token for the trunk, from its newest
// session: what the credentials broker exchanges. Never logged.
func (t *Trunk) inboundToken(subject string) string {
	all := t.hosts.all()
	for i := len(all) - 1; i >= 0; i-- {
		if s := all[i]; s.subject == subject && s.token != nil {
			if v := s.token(); v != "" {
				return v
			}
		}
	}
	return ""
}

// ownFleet makes a set of own instances, told the capabilities of hr.
func (t *Trunk) ownFleet(logger *slog.Logger, hr hostRequest, notify func(server, method string, params json.RawMessage),
	ask func(ctx context.Context, server, method string, params json.RawMessage) (json.RawMessage, error),
	authz func(ctx context.Context, server, refused string) (string, error)) *upstream.Fleet {
	return upstream.NewFleet(&upstream.Options{
		Logger:          logger,
		Concurrency:     1,
		MaxMessageBytes: t.state.Load().cfg.Trunk.MaxMessageBytes,
		Version:         t.version,
		Capabilities:    hr.ForwardedCaps(),
		Restart:         t.restart,
		Dial:            t.dial,
		Prefer2025:      !protocol.IsStateless(hr.Version),
		Authorization:   authz,
		Events: upstream.Events{
			Changed:      func(string) {}, // the catalog is the shared instance's
			Notification: notify,
			Request:      ask,
			KeepAwake:    t.taskLog.Runs, // by server name: any instance's task keeps each up
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

// ownCall is the id of s's one call in flight on server, "" when it has
// none or several: what a message of s's own instance belongs to.
func (t *Trunk) ownCall(s *Session, server string) string {
	_, call, _ := t.hosts.concerned(server, nil, func(o *Session) bool { return o == s })
	return call
}

// toSession delivers a notification of server to s, which it concerns, on
// the stream of its request call ("" when not known): a log message at
// s's level.
func (t *Trunk) toSession(s *Session, call, server, method string, params json.RawMessage) {
	switch method {
	case "notifications/progress":
		t.toHosts(server, method, params) // the token says whose: s's
		return
	}
	if !s.sees(server) { // its view hides server: it hears of it what it hears of a server that does not exist
		return
	}
	switch method {
	case "notifications/message":
		level, _ := rawjson.StringField(params, "level")
		if !s.wantsLog(server, level) {
			return
		}
	}
	if err := s.notifyFor(call, method, params); err != nil {
		t.notifyFailed(server, method, err)
	}
}

// perSessionURI reports whether a namespaced URI belongs to a server with
// instances of a session's or a caller's own: its subscriptions are the
// session's own, not shared.
func (t *Trunk) perSessionURI(uri string) bool {
	server, _, ok := naming.SplitResourceURI(uri)
	if !ok {
		return false
	}
	c, ok := t.Fleet().Client(server)
	return ok && (c.Spec().PerSession() || c.Spec().PerCaller() || c.Spec().PerUser())
}
