package relay

import (
	"encoding/json"
	"sync"
	"time"
)

// Resync remembers what the hosts asked of the servers that a server which
// connects later, or again after a restart, must be asked too: the log
// level and the resource subscriptions. Without it a restarted server would
// fall silent on both without anyone noticing.
//
// Each item also remembers the connection that has it (a connection is
// known by when its server became ready), so that a server is told each
// thing once per connection: whether by the host's own request passed on,
// or by the resync when it connects, whichever comes first.
type Resync struct {
	mu        sync.Mutex
	level     json.RawMessage                 // the last logging/setLevel params
	levelTold map[string]time.Time            // server -> the connection that has level
	subs      map[string]map[string]time.Time // server -> server's URI -> the connection that has it
}

// Conn is one connection to a server, as far as a Resync needs it.
type Conn struct {
	Server string
	Since  time.Time // when it became ready: the connection's identity
	// Ready and Logging: the server is ready and takes logging/setLevel.
	Ready, Logging bool
}

// NewResync returns an empty Resync.
func NewResync() *Resync {
	return &Resync{levelTold: map[string]time.Time{}, subs: map[string]map[string]time.Time{}}
}

// SetLevel records a new level: no connection has it yet.
func (r *Resync) SetLevel(params json.RawMessage) {
	r.mu.Lock()
	r.level = params
	clear(r.levelTold)
	r.mu.Unlock()
}

// ClaimLevel reports whether the connection still needs the level, and
// marks it told.
func (r *Resync) ClaimLevel(c Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if told, ok := r.levelTold[c.Server]; ok && told.Equal(c.Since) {
		return false
	}
	r.levelTold[c.Server] = c.Since
	return true
}

// Subscribed records a subscription (on) or its end. since is the
// connection the host's request went to, which has it now.
func (r *Resync) Subscribed(server, uri string, on bool, since time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if on {
		if r.subs[server] == nil {
			r.subs[server] = map[string]time.Time{}
		}
		r.subs[server][uri] = since
	} else {
		delete(r.subs[server], uri)
	}
}

// Due returns what a connection must be told, and marks it told. ok is
// false when there is nothing (or the server is not ready).
func (r *Resync) Due(c Conn) (level json.RawMessage, uris []string, ok bool) {
	if !c.Ready {
		return nil, nil, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if told, had := r.levelTold[c.Server]; r.level != nil && c.Logging && !(had && told.Equal(c.Since)) {
		level = r.level
		r.levelTold[c.Server] = c.Since
	}
	for uri, since := range r.subs[c.Server] {
		if !since.Equal(c.Since) {
			uris = append(uris, uri)
			r.subs[c.Server][uri] = c.Since
		}
	}
	return level, uris, level != nil || len(uris) > 0
}
