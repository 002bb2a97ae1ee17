package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcptrunk/mcptrunk/internal/config"
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
// server) to the sessions it concerns (hostSet). With sharing off, that is
// the one host, when its view shows server. Progress goes only while the
// host request that carried its token is in flight (hostSet.claimProgress):
// after the answer or the host's cancel the spec forbids sending it.
func (t *Trunk) toHosts(server, method string, params json.RawMessage) {
	sessions := t.hosts.all()
	if !t.hosts.shared.Load() {
		if method == "notifications/progress" && !t.hosts.live.Has(params) && !forTask(params) {
			t.logger.Debug("progress for no request in flight", "server", server)
			return
		}
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
	case "notifications/resources/updated":
		uri, _ := rawjson.StringField(params, "uri")
		for _, s := range sessions {
			if !s.wantsUpdate(uri) || !s.sees(server) {
				continue
			}
			if err := s.Notify(method, params); err != nil {
				t.notifyFailed(server, method, err)
			}
		}
		return
	}
	// A log line, or anything else a server says, names no call: it
	// concerns the one session with calls on the server, if there is one.
	t.toConcerned(server, method, params, nil)
}

// forTask reports whether progress params name a task (the related-task
// _meta): a task's progress goes on under its call's token after the call
// is answered, for the task's life, which the server keeps.
func forTask(params json.RawMessage) bool {
	return rawjson.MetaValue(params, translate.RelatedTaskKey) != nil
}

// toConcerned sends a server's notification to the one session of those
// mine admits (nil: any) that it concerns (hostSet.concerned), or counts
// it as unattributed when the trunk cannot name that session.
func (t *Trunk) toConcerned(server, method string, params json.RawMessage, mine func(*Session) bool) {
	s, call, busy := t.hosts.concerned(server, params, mine)
	if s == nil {
		t.unattributed(server, method, busy)
		return
	}
	t.toSession(s, call, server, method, params)
}

// unattributed counts a notification of a shared server that no session
// can be told it concerns (busy sessions had calls in flight on it), and
// logs the first of each server: it goes to nobody rather than to a guess.
func (t *Trunk) unattributed(server, method string, busy int) {
	t.unowned.Add(1)
	if _, seen := t.unownedFrom.LoadOrStore(server, true); seen {
		return
	}
	reason := "no session has a call in flight on it"
	if busy > 1 {
		reason = "several sessions have calls in flight on it at once"
	}
	t.logger.Warn("a shared server's notification concerns no session the trunk can name, so it goes to nobody (this and later ones are counted in unattributedNotifications)",
		"server", server, "method", method, "reason", reason, "setting", config.ScopeSetting)
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
// to the host whose call caused it, and its answer back; when the trunk
// cannot tell whose call that is, the server gets an error that says why
// and what setting avoids it (hostSet.concerned). ctx ends when the
// upstream cancels.
func (t *Trunk) forwardRequest(ctx context.Context, server, method string, params json.RawMessage) (json.RawMessage, error) {
	if ex := t.parked.HeldFor(server, params); ex != nil {
		return ex.Ask(ctx, method, params) // it names a task the trunk holds for its host
	}
	if !t.hosts.shared.Load() {
		if ex := t.parked.Current(server, params); ex != nil {
			// The stateless host's call: the request goes to the host
			// inside the call's next result.
			return ex.Ask(ctx, method, params)
		}
	}
	s, call, busy := t.hosts.concerned(server, params, nil)
	if s == nil {
		if len(t.hosts.all()) == 0 {
			return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "method %q: mcptrunk has no host to ask", method)
		}
		return nil, unattributedRequest(server, method, "", busy)
	}
	if s.perRequest {
		// A stateless request's call, parked: the request goes to its
		// host inside the call's next result.
		if ex := t.parked.Current(server, params); ex != nil {
			return ex.Ask(ctx, method, params)
		}
		return nil, unattributedRequest(server, method, "", 0)
	}
	t.logger.Debug("forwarding a request to the host", "server", server, "method", method, "session", s.id)
	// A request during a task names it by the server's id; the host knows the trunk's.
	return t.askSession(ctx, s, call, server, method, tasks.Relate(params, t.sessionTaskIDs(s, server)))
}

// unattributedRequest is the answer to a server's request that the trunk
// cannot take to a caller: busy sessions (of subject, when named) had
// calls in flight on server. It names the setting that gives each caller
// an instance of its own, whose requests are always its caller's.
func unattributedRequest(server, method, subject string, busy int) error {
	whose := "no session"
	if subject != "" {
		whose = fmt.Sprintf("no session of %q", subject)
	}
	reason := whose + " has a call in flight on it"
	if busy > 1 {
		reason = fmt.Sprintf("%d sessions have calls in flight on it at once", busy)
	}
	return jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "method %q of server %q: %s, so mcptrunk cannot tell whose call it belongs to and asks nobody; "+
		"give the server an instance per caller (%q: %q in its entry, or %q) so that its questions reach the caller whose call asks them",
		method, server, reason, config.ScopeSetting, config.ScopeCaller, config.ScopeSession)
}

// askSession sends an upstream's request to s, the session whose request
// (call, its id; "" when not known) it belongs to, and returns the answer;
// without s, where forwardRequest's rule says.
func (t *Trunk) askSession(ctx context.Context, s *Session, call, server, method string, params json.RawMessage) (json.RawMessage, error) {
	if s == nil {
		return t.forwardRequest(ctx, server, method, params)
	}
	params, release := s.routeProgress(server, params)
	defer release()
	return s.callFor(ctx, call, method, params)
}

// exportNotification is a server's notification as hosts get it
// (catalog.ExportNotification).
func (t *Trunk) exportNotification(server, method string, params json.RawMessage) json.RawMessage {
	return catalog.ExportNotification(server, method, params, t.snapshot().Unprefixed(server))
}
