package proxy

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/proxy/catalog"
	"github.com/mcptrunk/mcptrunk/proxy/outbox"
	"github.com/mcptrunk/mcptrunk/proxy/tasks"
	"github.com/mcptrunk/mcptrunk/proxy/translate"
)

// forwardNotification passes an upstream's notification to the hosts it
// concerns (hosts.go), rewriting what names the upstream (exportNotification
// in uris.go).
func (t *Trunk) forwardNotification(server, method string, params json.RawMessage) {
	if len(t.hosts.all()) == 0 {
		return
	}
	if method == tasks.StatusMethod || method == tasks.NotificationMethod {
		t.taskStatus(server, method, params)
		return
	}
	t.toHosts(server, method, t.exportNotification(server, method, params))
}

// toHosts delivers a notification from server (or the trunk's own, about
// server) to the sessions it concerns. With sharing off, that is every
// session: the one host.
func (t *Trunk) toHosts(server, method string, params json.RawMessage) {
	sessions := t.hosts.all()
	if !t.hosts.shared.Load() {
		for _, s := range sessions {
			if !s.sees(server) {
				continue
			}
			if err := s.Notify(method, params); err != nil {
				t.notifyFailed(server, method, err)
			}
		}
		return
	}
	var wants func(*Session) bool
	switch method {
	case "notifications/progress":
		s, p, ok := t.hosts.progress.Owner(params)
		if !ok {
			t.logger.Debug("progress for no request in flight", "server", server)
			return
		}
		if err := s.Notify(method, p); err != nil {
			t.notifyFailed(server, method, err)
		}
		return
	case "notifications/message":
		level, _ := rawjson.StringField(params, "level")
		wants = func(s *Session) bool { return s.wantsLog(server, level) }
	case "notifications/resources/updated":
		uri, _ := rawjson.StringField(params, "uri")
		wants = func(s *Session) bool { return s.wantsUpdate(uri) }
	default:
		// Anything else an upstream says is taken to concern the session
		// that has a call on it, as its requests are.
		caller := t.hosts.caller(server, "", nil)
		wants = func(s *Session) bool { return s == caller }
	}
	for _, s := range sessions {
		if !wants(s) || !s.sees(server) {
			continue
		}
		if err := s.Notify(method, params); err != nil {
			t.notifyFailed(server, method, err)
		}
	}
}

// CountDropped counts n notifications a downstream of the trunk dropped
// (the HTTP sessions' buffers past their budget) in droppedNotifications.
func (t *Trunk) CountDropped(n int) { t.dropped.Add(int64(n)) }

// notifyFailed logs a notification the host did not get. One over the
// host's message limit is dropped on purpose, and said so at warning level:
// the host would have lost its connection over it.
func (t *Trunk) notifyFailed(server, method string, err error) {
	var tooLarge *jsonrpc.TooLargeError
	switch {
	case errors.As(err, &tooLarge):
		t.dropped.Add(1)
		t.logger.Warn("dropped a notification larger than the host reads", "server", server, "method", method,
			"bytes", tooLarge.Size, "limit", tooLarge.Limit, "setting", catalog.LimitSetting)
		return
	case errors.Is(err, outbox.ErrFull):
		// A flood while the host is slow: say so now and then, not once
		// per notification.
		if n := t.dropped.Add(1); n == 1 || n%1000 == 0 {
			t.logger.Warn("dropping notifications: the host is not reading them fast enough", "server", server, "method", method, "dropped", n)
		}
		return
	}
	t.logger.Debug("forwarding a notification failed", "server", server, "method", method, "error", err)
}

// forwardRequest passes an upstream's request (sampling, elicitation, roots)
// to the host whose call caused it, and its answer back. ctx ends when the
// upstream cancels.
func (t *Trunk) forwardRequest(ctx context.Context, server, method string, params json.RawMessage) (json.RawMessage, error) {
	if ex := t.parked.Current(server, params); ex != nil {
		// A stateless host's call is in flight on this server: the
		// request goes to the host inside the call's next result.
		return ex.Ask(ctx, method, params)
	}
	s := t.hosts.caller(server, translate.CapabilityFor[method], nil)
	if s == nil {
		if len(t.hosts.all()) == 0 {
			return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "method %q: mcptrunk has no host to ask", method)
		}
		return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "method %q of server %q: no session has a call in flight on it, so mcptrunk cannot tell which host to ask", method, server)
	}
	t.logger.Debug("forwarding a request to the host", "server", server, "method", method, "session", s.id)
	// A request during a task names it by the server's id; the host knows the trunk's.
	params, release := s.routeProgress(server, tasks.Relate(params, t.sessionTaskIDs(s, server)))
	defer release()
	return s.Call(ctx, method, params)
}

// askSession sends an upstream's request to the session whose request it
// belongs to, when that is known (a multi-round-trip result names its
// call), else where forwardRequest's rule says.
func (t *Trunk) askSession(ctx context.Context, s *Session, server, method string, params json.RawMessage) (json.RawMessage, error) {
	if s == nil {
		return t.forwardRequest(ctx, server, method, params)
	}
	params, release := s.routeProgress(server, params)
	defer release()
	return s.Call(ctx, method, params)
}

// exportNotification is a server's notification as hosts get it
// (catalog.ExportNotification).
func (t *Trunk) exportNotification(server, method string, params json.RawMessage) json.RawMessage {
	return catalog.ExportNotification(server, method, params, t.snapshot().Unprefixed(server))
}
