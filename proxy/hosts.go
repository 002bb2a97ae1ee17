package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/proxy/relay"
	"github.com/mcptrunk/mcptrunk/proxy/tasks"
	"github.com/mcptrunk/mcptrunk/proxy/translate"
)

// hostSet is every host session attached to the trunk: the stdio host, and
// each session of the HTTP downstream. Upstreams are shared by all of them,
// so what an upstream sends is routed to the sessions it concerns:
//
//   - progress for a host's request goes to that session only: in shared
//     mode every request's progressToken is replaced on the way up with one
//     unique to the trunk (two hosts may pick the same token), and replaced
//     back on the way down (claimProgress, progress.Owner);
//   - resources/updated to the sessions subscribed to the URI;
//   - list_changed to every session;
//   - a server-to-client request (sampling, elicitation, roots) to the
//     session whose request caused it: exact with the stateless revision
//     (the request comes back inside the call's result); a 2025 server's
//     request, its log messages and any other notification it sends, which
//     do not say whose call they belong to, to the one session with calls
//     in flight on that server (concerned), at that session's log level.
//     With no session, or several, in flight the trunk cannot tell: a
//     request is refused with the reason and the setting that avoids it
//     (an instance per caller, "scope"), a notification goes to nobody
//     (Trunk.unattributed), never to a guess.
//
// Nothing a server sends reaches a session whose view does not show the
// server (Session.sees).
//
// With one session and sharing off (stdio only, the usual case) nothing is
// rewritten and everything goes to that session, of the servers its view
// shows.
type hostSet struct {
	shared atomic.Bool // set before Start by Trunk.Share: more than one session may attach

	mu   sync.Mutex
	list atomic.Pointer[[]*Session] // attach order, oldest first; copied on change

	progress relay.Progress[*Session] // the trunk's progress tokens, in shared mode
	live     relay.Live               // the host's progress tokens in flight, with sharing off
	calls    relay.InFlight[hostCall] // the calls in flight, by server, in shared mode
	tasks    tasks.Owners[*Session]   // the session that created each task, for its status notifications
}

// hostCall is a session's call in flight on a server: the session, and
// the id of the host's request (compact JSON; "" when it has none).
type hostCall struct {
	s  *Session
	id string
}

func newHostSet() *hostSet {
	h := &hostSet{}
	h.list.Store(&[]*Session{})
	return h
}

// all returns the attached sessions, oldest first. It takes no lock: it is
// on the path of every notification.
func (h *hostSet) all() []*Session { return *h.list.Load() }

func (h *hostSet) add(s *Session) {
	h.mu.Lock()
	defer h.mu.Unlock()
	next := append(slices.Clone(h.all()), s)
	h.list.Store(&next)
}

func (h *hostSet) remove(s *Session) {
	h.mu.Lock()
	next := slices.DeleteFunc(slices.Clone(h.all()), func(o *Session) bool { return o == s })
	h.list.Store(&next)
	h.mu.Unlock()
	h.progress.Forget(s)
	h.tasks.Forget(s)
}

// claimProgress replaces, in shared mode, the progress token of a
// session's request with one unique to the trunk, until release; with
// sharing off params come back as they are and the token is held live
// until release or ctx ends (the host's cancel). Either way a server's progress reaches the host only
// while the request that carried its token is in flight (Trunk.toHosts).
func (h *hostSet) claimProgress(ctx context.Context, s *Session, params json.RawMessage) (json.RawMessage, func()) {
	if !h.shared.Load() {
		return params, h.live.Hold(ctx, params)
	}
	return h.progress.Claim(s, params)
}

// began records that s has a call in flight on server, for its host's
// request id (hostRequest.id; nil for none); the func ends it. Only in
// shared mode, where there is someone to choose from.
func (h *hostSet) began(s *Session, server string, id json.RawMessage) func() {
	if s == nil || !h.shared.Load() {
		return func() {}
	}
	return h.calls.Began(hostCall{s, compactID(id)}, server)
}

// compactID is a request id as a key, whatever its spacing.
func compactID(id json.RawMessage) string {
	var b bytes.Buffer
	if len(id) == 0 || json.Compact(&b, id) != nil {
		return string(id)
	}
	return b.String()
}

// concerned is the session what server sends on its own concerns (a
// request of a 2025 server, a log line, any notification no token routes;
// params are its params), when the trunk can tell: the session that owns
// the task params names in its related-task _meta (exact), else in shared
// mode the one session with calls in flight on server (of those mine
// admits, when set), busy counting those sessions; with none, or several,
// it names nobody rather than guess. With sharing off it is the one host.
// A session whose view does not show server is never named (Session.sees).
// call is the id of the host's request the message belongs to, when the
// session has exactly one call in flight on server ("" otherwise): on
// HTTP the message goes on that request's stream (Session.notifyFor, callFor).
func (h *hostSet) concerned(server string, params json.RawMessage, mine func(*Session) bool) (s *Session, call string, busy int) {
	if mine == nil {
		mine = func(*Session) bool { return true }
	}
	if id, _ := rawjson.StringField(rawjson.MetaValue(params, translate.RelatedTaskKey), "taskId"); id != "" {
		if owner, ok := h.tasks.Owner(server, id); ok && mine(owner) {
			if !owner.sees(server) {
				return nil, "", 1
			}
			return owner, "", 1
		}
	}
	if !h.shared.Load() {
		for _, c := range h.all() {
			if c.perRequest || !mine(c) {
				continue
			}
			if s != nil {
				return nil, "", 0
			}
			s = c
		}
		if s == nil || !s.sees(server) {
			return nil, "", 0
		}
		return s, "", 0
	}
	var sessions []*Session
	var calls []string // the first session's
	for _, c := range h.calls.On(server) {
		if !mine(c.s) {
			continue
		}
		if !slices.Contains(sessions, c.s) {
			sessions = append(sessions, c.s)
		}
		if c.s == sessions[0] && !slices.Contains(calls, c.id) {
			calls = append(calls, c.id)
		}
	}
	if busy = len(sessions); busy != 1 || !sessions[0].sees(server) {
		return nil, "", busy
	}
	s = sessions[0]
	if len(calls) == 1 {
		call = calls[0]
	}
	return s, call, busy
}

// busyOn reports whether s has a call in flight on server.
func (h *hostSet) busyOn(s *Session, server string) bool {
	return slices.ContainsFunc(h.calls.On(server), func(c hostCall) bool { return c.s == s })
}
