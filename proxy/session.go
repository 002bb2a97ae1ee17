package proxy

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/mcptrunk/mcptrunk/upstream"
)

// session remembers what the host asked of the upstreams that a server
// which connects later, or again after a restart, must be asked too: the
// log level and the resource subscriptions. Without it a restarted server
// would fall silent on both without anyone noticing.
type session struct {
	mu     sync.Mutex
	level  json.RawMessage            // the last logging/setLevel params
	subs   map[string]map[string]bool // server -> upstream URI -> subscribed
	synced map[string]time.Time       // server -> the connection (its ready time) told all of it
}

func newSession() *session {
	return &session{subs: map[string]map[string]bool{}, synced: map[string]time.Time{}}
}

func (s *session) setLevel(params json.RawMessage) {
	s.mu.Lock()
	s.level = params
	s.mu.Unlock()
}

func (s *session) subscribed(server, uri string, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if on {
		if s.subs[server] == nil {
			s.subs[server] = map[string]bool{}
		}
		s.subs[server][uri] = true
	} else {
		delete(s.subs[server], uri)
	}
}

// due returns what a ready server must be told on its current connection,
// and marks it told. ok is false when it already was.
func (s *session) due(c *upstream.Client) (level json.RawMessage, uris []string, ok bool) {
	st := c.Status()
	s.mu.Lock()
	defer s.mu.Unlock()
	if st.State != upstream.StateReady || s.synced[st.Server].Equal(st.Since) {
		return nil, nil, false
	}
	s.synced[st.Server] = st.Since
	if c.Init().Capabilities.Logging {
		level = s.level
	}
	for uri := range s.subs[st.Server] {
		uris = append(uris, uri)
	}
	return level, uris, level != nil || len(uris) > 0
}

// resync tells every server that (re)connected since it was last told
// what the host asked for, each on a goroutine of the trunk's own.
func (t *Trunk) resync() {
	for _, c := range t.clients() {
		level, uris, ok := t.session.due(c)
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
