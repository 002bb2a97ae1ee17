package proxy

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/mcptrunk/mcptrunk/upstream"
)

// resync remembers what the host asked of the upstreams that a server
// which connects later, or again after a restart, must be asked too: the
// log level and the resource subscriptions. Without it a restarted server
// would fall silent on both without anyone noticing.
//
// Each item also remembers the connection that has it (a connection is
// known by the time its server became ready), so that a server is told each
// thing once per connection: whether by the host's own request passed on,
// or by resync when it connects, whichever comes first.
type resync struct {
	mu        sync.Mutex
	level     json.RawMessage                 // the last logging/setLevel params
	levelTold map[string]time.Time            // server -> the connection that has level
	subs      map[string]map[string]time.Time // server -> upstream URI -> the connection that has it
}

func newResync() *resync {
	return &resync{levelTold: map[string]time.Time{}, subs: map[string]map[string]time.Time{}}
}

// setLevel records a new level: no connection has it yet.
func (s *resync) setLevel(params json.RawMessage) {
	s.mu.Lock()
	s.level = params
	clear(s.levelTold)
	s.mu.Unlock()
}

// claimLevel reports whether c's current connection still needs the level,
// and marks it told.
func (s *resync) claimLevel(c *upstream.Client) bool {
	st := c.Status()
	s.mu.Lock()
	defer s.mu.Unlock()
	if told, ok := s.levelTold[st.Server]; ok && told.Equal(st.Since) {
		return false
	}
	s.levelTold[st.Server] = st.Since
	return true
}

// subscribed records a subscription (on) or its end. conn is the connection
// the host's request went to, which has it now.
func (s *resync) subscribed(server, uri string, on bool, conn time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if on {
		if s.subs[server] == nil {
			s.subs[server] = map[string]time.Time{}
		}
		s.subs[server][uri] = conn
	} else {
		delete(s.subs[server], uri)
	}
}

// due returns what a ready server must be told on its current connection,
// and marks it told. ok is false when there is nothing.
func (s *resync) due(c *upstream.Client) (level json.RawMessage, uris []string, ok bool) {
	st := c.Status()
	if st.State != upstream.StateReady {
		return nil, nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if told, had := s.levelTold[st.Server]; s.level != nil && c.Init().Capabilities.Logging && !(had && told.Equal(st.Since)) {
		level = s.level
		s.levelTold[st.Server] = st.Since
	}
	for uri, conn := range s.subs[st.Server] {
		if !conn.Equal(st.Since) {
			uris = append(uris, uri)
			s.subs[st.Server][uri] = st.Since
		}
	}
	return level, uris, level != nil || len(uris) > 0
}

// resync tells every server that (re)connected since it was last told
// what the host asked for, each on a goroutine of the trunk's own.
func (t *Trunk) resync() {
	for _, c := range t.clients() {
		level, uris, ok := t.toResync.due(c)
		if !ok {
			continue
		}
		t.workers.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			stop := context.AfterFunc(t.life, cancel)
			defer stop()
			if level != nil {
				if _, err := c.Call(ctx, "logging/setLevel", level); err != nil {
					t.logger.Warn("passing the log level on failed", "server", c.Name(), "error", err)
				}
			}
			for _, uri := range uris {
				params, _ := json.Marshal(map[string]string{"uri": uri})
				if _, err := c.Call(ctx, "resources/subscribe", params); err != nil {
					t.logger.Warn("renewing a subscription failed", "server", c.Name(), "uri", uri, "error", err)
				}
			}
		})
	}
}
