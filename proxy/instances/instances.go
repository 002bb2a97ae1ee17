// Package instances keeps the instances of servers that belong to one key
// each, beside the trunk's shared ones.
//
// A key is a session ("scope": "session") or a signed-in caller ("scope":
// "caller" and per-user credentials, keyed by subject, so that a caller's
// several sessions and stateless requests share them and no instance ever
// serves another caller). A key's fleet is made at its first use and lives
// while the key is held (by its sessions); when the last hold ends it is
// closed, after Idle. Knows nothing of the trunk: the trunk says how a
// key's fleet is made (Client's made) and what its instances are started
// with.
package instances

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/upstream"
	"golang.org/x/sync/singleflight"
)

// closeTimeout bounds the stop of one key's instances.
const closeTimeout = 10 * time.Second

// Pool is the instances of every key. Set its fields before first use.
type Pool[K comparable] struct {
	// Idle, when set, says how long a key's fleet outlives its last hold;
	// without it (or at 0) the fleet is closed as the hold ends, before
	// release returns.
	Idle func() time.Duration
	// Closed, when set, runs after a key's fleet was closed (what the key
	// held besides, such as tokens, goes with it).
	Closed func(key K)
	// Whose names the key in errors: "the session's", "the caller's".
	Whose  string
	Logger *slog.Logger

	mu     sync.Mutex
	sets   map[K]*set
	closed bool
}

type set struct {
	fleet  *upstream.Fleet // nil until the first instance
	holds  int
	idle   *time.Timer // running while nothing holds the set
	starts singleflight.Group
}

// Hold keeps key's instances alive until the returned release (called
// once) and Idle after it.
func (p *Pool[K]) Hold(key K) (release func()) {
	p.mu.Lock()
	s := p.setLocked(key)
	s.holds++
	if s.idle != nil {
		s.idle.Stop()
		s.idle = nil
	}
	p.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { p.release(key, s) }) }
}

func (p *Pool[K]) setLocked(key K) *set {
	if p.sets == nil {
		p.sets = map[K]*set{}
	}
	s, ok := p.sets[key]
	if !ok {
		s = &set{}
		p.sets[key] = s
	}
	return s
}

func (p *Pool[K]) release(key K, s *set) {
	p.mu.Lock()
	s.holds--
	if s.holds > 0 || p.sets[key] != s {
		p.mu.Unlock()
		return
	}
	if idle := p.idleFor(); idle > 0 && s.fleet != nil {
		s.idle = time.AfterFunc(idle, func() { p.expire(key, s) })
		p.mu.Unlock()
		return
	}
	delete(p.sets, key)
	p.mu.Unlock()
	p.closeSet(key, s)
}

func (p *Pool[K]) idleFor() time.Duration {
	if p.Idle == nil {
		return 0
	}
	return p.Idle()
}

// expire closes s when it is still unheld when its idle timer fires.
func (p *Pool[K]) expire(key K, s *set) {
	p.mu.Lock()
	if s.holds > 0 || p.sets[key] != s {
		p.mu.Unlock()
		return
	}
	delete(p.sets, key)
	p.mu.Unlock()
	p.closeSet(key, s)
}

func (p *Pool[K]) closeSet(key K, s *set) {
	p.mu.Lock()
	fleet := s.fleet
	p.mu.Unlock()
	if fleet != nil {
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		defer cancel()
		if err := fleet.Close(ctx); err != nil && p.Logger != nil {
			p.Logger.Warn("stopping own instances", "error", err)
		}
	}
	if p.Closed != nil {
		p.Closed(key)
	}
}

// Client returns key's own instance of server id, starting it (once,
// whatever the number of requests waiting) from spec(), and then calling
// started with it when it came up. key must be held. The first request
// of a key makes its fleet with made: the request that needs the first
// instance says what the key's instances are told (the host's
// capabilities, where their notifications go).
func (p *Pool[K]) Client(ctx context.Context, key K, made func() *upstream.Fleet, id string, spec func() (config.Spec, error), started func(*upstream.Client)) (*upstream.Client, error) {
	p.mu.Lock()
	s, ok := p.sets[key]
	if !ok || s.holds == 0 || p.closed {
		p.mu.Unlock()
		return nil, jsonrpc.Errorf(jsonrpc.CodeUnavailable, "server %q: %s own instances have been stopped", id, p.Whose)
	}
	if s.fleet == nil {
		s.fleet = made()
	}
	fleet := s.fleet
	p.mu.Unlock()
	if c, ok := usable(fleet, id); ok {
		return c, nil
	}
	v, err, _ := s.starts.Do(id, func() (any, error) {
		if c, ok := usable(fleet, id); ok {
			return c, nil
		}
		// One that failed for good (its credential refused, say) is
		// started afresh: its key may have one now.
		_ = fleet.Remove(context.WithoutCancel(ctx), id)
		sp, err := spec()
		if err != nil {
			return nil, err
		}
		if p.Logger != nil {
			p.Logger.Info("starting "+p.Whose+" own instance", "server", id)
		}
		// Not the request's ctx: the instance outlives the request that
		// started it.
		startErr := fleet.Add(context.WithoutCancel(ctx), sp)
		c, ok := fleet.Client(id)
		if !ok {
			return nil, startErr
		}
		if startErr == nil && started != nil {
			started(c)
		}
		return c, nil
	})
	if err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeUnavailable, "server %q: %s own instance could not start: %v", id, p.Whose, err)
	}
	return v.(*upstream.Client), nil
}

// usable is fleet's instance of id unless there is none or it failed for
// good (a restart still due is waited for as for the shared ones).
func usable(fleet *upstream.Fleet, id string) (*upstream.Client, bool) {
	c, ok := fleet.Client(id)
	if !ok {
		return nil, false
	}
	st, _ := c.State()
	return c, st != upstream.StateFailed
}

// Close stops every key's instances; none starts after it.
func (p *Pool[K]) Close() {
	p.mu.Lock()
	p.closed = true
	sets := p.sets
	p.sets = nil
	p.mu.Unlock()
	for key, s := range sets {
		p.mu.Lock()
		if s.idle != nil {
			s.idle.Stop()
		}
		p.mu.Unlock()
		p.closeSet(key, s)
	}
}

// Restart stops every key's instance of server id, so that each key's next
// use starts it afresh: a reload changed its entry (command, credentials,
// anything), and an instance a caller started under the old one must not
// outlive it. The keys and their other instances are left alone.
func (p *Pool[K]) Restart(ctx context.Context, id string) {
	p.mu.Lock()
	var fleets []*upstream.Fleet
	for _, s := range p.sets {
		if s.fleet != nil {
			fleets = append(fleets, s.fleet)
		}
	}
	p.mu.Unlock()
	for _, f := range fleets {
		if _, ok := f.Client(id); !ok {
			continue // this key never used it
		}
		if err := f.Remove(ctx, id); err != nil && p.Logger != nil {
			p.Logger.Warn("stopping an own instance whose entry changed", "server", id, "error", err)
		}
	}
}
