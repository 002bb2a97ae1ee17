package statuspage

import (
	"time"

	"github.com/mcptrunk/mcptrunk/upstream"
)

// Snapshot is the trunk as the page shows it, read when a page or an event
// is rendered.
type Snapshot struct {
	Servers []upstream.Status
	// MaxMessageBytes is the host's message limit in force;
	// DroppedNotifications counts the notifications it (or a full outbox)
	// cost; ParkedCalls the exchanges waiting between rounds of input;
	// Sessions the hosts attached.
	MaxMessageBytes      int
	DroppedNotifications int64
	ParkedCalls          int
	Sessions             int
	// PinMode is trunk.pin; Pins counts, per server with any, the items
	// that drifted from the lockfile, are withheld, or have findings.
	PinMode string
	Pins    map[string]PinCounts
	// Profiles are trunk.profiles, each name with its description: the
	// views served at <path>/p/<name>.
	Profiles map[string]string
	// Version is mcptrunk's own, for the page's footer.
	Version string
	// Store is the state store (trunk.state); nil when state is kept in
	// memory.
	Store *Store
}

// Store is the state store: kind, where (never a password), whether it
// answered last, since when, and why not.
type Store struct {
	Kind, Where string
	Up          bool
	Since       time.Time
	Error       string
}

// PinCounts is pinning's word on one server.
type PinCounts struct {
	Drift, Withheld, Findings int
}

// Source reads the trunk now.
type Source func() Snapshot

// rates turns the servers' cumulative call counts into calls per second
// over the last few seconds: the page is read by a person watching it, who
// wants to see what is happening now rather than since the start.
type rates struct {
	window time.Duration
	old    map[string]sample // the window's start
	cur    map[string]sample // its end so far
	curAt  time.Time
}

type sample struct {
	at    time.Time
	calls int64
}

func newRates(window time.Duration) *rates {
	return &rates{window: window, old: map[string]sample{}, cur: map[string]sample{}}
}

// observe records the servers' counts at now and returns each one's rate
// against the oldest sample kept; a server seen for the first time has none.
// The caller serialises calls.
func (r *rates) observe(now time.Time, servers []upstream.Status) map[string]float64 {
	if now.Sub(r.curAt) >= r.window {
		r.old, r.cur, r.curAt = r.cur, map[string]sample{}, now
	}
	out := map[string]float64{}
	for _, s := range servers {
		if _, ok := r.cur[s.Server]; !ok {
			r.cur[s.Server] = sample{now, s.Calls}
		}
		base, ok := r.old[s.Server]
		if !ok {
			base = r.cur[s.Server]
		}
		if d := now.Sub(base.at).Seconds(); d > 0 && s.Calls >= base.calls {
			out[s.Server] = float64(s.Calls-base.calls) / d
		}
	}
	return out
}
