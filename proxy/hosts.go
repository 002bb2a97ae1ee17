package proxy

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/mcptrunk/mcptrunk/internal/rawjson"
)

// hostSet is every host session attached to the trunk: the stdio host, and
// each session of the HTTP downstream. Upstreams are shared by all of them,
// so what an upstream sends is routed to the sessions it concerns:
//
//   - progress for a host's request goes to that session only: in shared
//     mode every request's progressToken is replaced on the way up with one
//     unique to the trunk (two hosts may pick the same token), and replaced
//     back on the way down (claimProgress, progressOwner);
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

	seq      atomic.Int64
	progress sync.Map // the trunk's token (raw JSON) -> progressOwner

	tasks sync.Map // taskKey of a server's task -> the *Session that created it (tasks_status.go)

	callsMu sync.Mutex
	calls   map[string][]*Session // server -> sessions with a call in flight on it, oldest first
}

// progressOwner is the session a trunk progress token belongs to, and the
// session's own token.
type progressOwner struct {
	session *Session
	token   json.RawMessage
}

func newHostSet() *hostSet {
	h := &hostSet{calls: map[string][]*Session{}}
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
	h.progress.Range(func(k, v any) bool {
		if v.(progressOwner).session == s {
			h.progress.Delete(k)
		}
		return true
	})
	h.forgetTasks(s)
}

// claimProgress replaces, in shared mode, the progress token of a
// session's request with one unique to the trunk, until release. Without a
// token, or with sharing off, params come back as they are.
func (h *hostSet) claimProgress(s *Session, params json.RawMessage) (json.RawMessage, func()) {
	noop := func() {}
	if !h.shared.Load() {
		return params, noop
	}
	token := progressToken(params)
	if token == nil {
		return params, noop
	}
	mine := json.RawMessage(strconv.Quote("mcptrunk-p" + strconv.FormatInt(h.seq.Add(1), 10)))
	out, err := replaceProgressToken(params, mine)
	if err != nil {
		return params, noop
	}
	key := string(mine)
	h.progress.Store(key, progressOwner{session: s, token: append(json.RawMessage(nil), token...)})
	return out, func() { h.progress.Delete(key) }
}

// progressOwner finds the session of a trunk progress token in an
// upstream's notifications/progress, and the params with the session's
// own token back in.
func (h *hostSet) progressOwner(params json.RawMessage) (*Session, json.RawMessage, bool) {
	start, end, found, err := rawjson.FieldSpan(params, "progressToken")
	if err != nil || !found {
		return nil, nil, false
	}
	var key bytes.Buffer
	if json.Compact(&key, params[start:end]) != nil {
		return nil, nil, false
	}
	v, ok := h.progress.Load(key.String())
	if !ok {
		return nil, nil, false
	}
	owner := v.(progressOwner)
	out, err := rawjson.ReplaceField(params, "progressToken", owner.token)
	if err != nil {
		return nil, nil, false
	}
	return owner.session, out, true
}

// began records that s has a call in flight on server; the func ends it.
// Only in shared mode, where there is someone to choose from.
func (h *hostSet) began(s *Session, server string) func() {
	if s == nil || !h.shared.Load() {
		return func() {}
	}
	h.callsMu.Lock()
	h.calls[server] = append(h.calls[server], s)
	h.callsMu.Unlock()
	return func() {
		h.callsMu.Lock()
		defer h.callsMu.Unlock()
		list := h.calls[server]
		if i := slices.Index(list, s); i >= 0 {
			list = slices.Delete(list, i, i+1)
		}
		if len(list) == 0 {
			delete(h.calls, server)
		} else {
			h.calls[server] = list
		}
	}
}

// caller is the session a 2025 server's request is taken to come from: of
// the sessions with a call in flight on that server, the oldest that
// declared the capability the request needs ("" for none), else the
// oldest; with none, the only session that can be asked, when there is
// exactly one. nil when it cannot be known.
func (h *hostSet) caller(server, capability string) *Session {
	h.callsMu.Lock()
	if list := h.calls[server]; len(list) > 0 {
		s := list[0]
		for _, c := range list {
			if capability == "" || c.legacyHost().Can(capability) {
				s = c
				break
			}
		}
		h.callsMu.Unlock()
		return s
	}
	h.callsMu.Unlock()
	var only *Session
	for _, s := range h.all() {
		if s.perRequest {
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
func (h *hostSet) busyOn(s *Session, server string) bool {
	h.callsMu.Lock()
	defer h.callsMu.Unlock()
	return slices.Contains(h.calls[server], s)
}

// replaceProgressToken sets params._meta.progressToken.
func replaceProgressToken(params, token json.RawMessage) (json.RawMessage, error) {
	start, end, _, err := rawjson.FieldSpan(params, "_meta")
	if err != nil {
		return nil, err
	}
	meta, err := rawjson.ReplaceField(params[start:end], "progressToken", token)
	if err != nil {
		return nil, err
	}
	return rawjson.ReplaceField(params, "_meta", meta)
}
