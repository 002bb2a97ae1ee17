package proxy

import (
	"encoding/json"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/mcptrunk/mcptrunk/proxy/relay"
	"github.com/mcptrunk/mcptrunk/proxy/tasks"
)

// hostSet is every host session attached to the trunk: the stdio host, and
// each session of the HTTP downstream. Upstreams are shared by all of them,
// so what an upstream sends is routed to the sessions it concerns:
//
//   - progress for a host's request goes to that session only: in shared
//     mode every request's progressToken is replaced on the way up with one
//     unique to the trunk (two hosts may pick the same token), and replaced
//     back on the way down (claimProgress, progress.Owner);
//   - log messages go to every session whose level admits them (wantsLog);
//   - resources/updated to the sessions subscribed to the URI;
//   - list_changed to every session;
//   - a server-to-client request (sampling, elicitation, roots) to the
//     session whose request caused it: exact with the stateless revision
//     (the request comes back inside the call's result), and for a 2025
//     server, which does not say, the session with the oldest call in
//     flight on that server (caller).
//
// With one session and sharing off (stdio only, the usual case) nothing is
// rewritten and everything goes to that session, as it always has.
type hostSet struct {
	shared atomic.Bool // set before Start by Trunk.Share: more than one session may attach

	mu   sync.Mutex
	list atomic.Pointer[[]*Session] // attach order, oldest first; copied on change

	progress relay.Progress[*Session] // the trunk's progress tokens, in shared mode
	calls    relay.InFlight[*Session] // sessions with a call in flight, by server, in shared mode
	tasks    tasks.Owners[*Session]   // the session that created each task, for its status notifications
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
// session's request with one unique to the trunk, until release. Without a
// token, or with sharing off, params come back as they are.
func (h *hostSet) claimProgress(s *Session, params json.RawMessage) (json.RawMessage, func()) {
	if !h.shared.Load() {
		return params, func() {}
	}
	return h.progress.Claim(s, params)
}

// began records that s has a call in flight on server; the func ends it.
// Only in shared mode, where there is someone to choose from.
func (h *hostSet) began(s *Session, server string) func() {
	if s == nil || !h.shared.Load() {
		return func() {}
	}
	return h.calls.Began(s, server)
}

// caller is the session a 2025 server's request is taken to come from: of
// the sessions with a call in flight on that server (of those mine admits,
// when set), the oldest that declared the capability the request needs
// ("" for none), else the oldest; with none, the only session that can be
// asked, when there is exactly one. nil when it cannot be known.
func (h *hostSet) caller(server, capability string, mine func(*Session) bool) *Session {
	if mine == nil {
		mine = func(*Session) bool { return true }
	}
	if list := slices.DeleteFunc(h.calls.On(server), func(s *Session) bool { return !mine(s) }); len(list) > 0 {
		for _, c := range list {
			if capability == "" || c.legacyHost().Can(capability) {
				return c
			}
		}
		return list[0]
	}
	var only *Session
	for _, s := range h.all() {
		if s.perRequest || !mine(s) {
			continue
		}
		if only != nil {
			return nil
		}
		only = s
	}
	return only
}

// busyOn reports whether s has a call in flight on server.
func (h *hostSet) busyOn(s *Session, server string) bool { return h.calls.Busy(s, server) }
