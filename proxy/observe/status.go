package observe

import (
	"time"

	"github.com/mcptrunk/mcptrunk/upstream"
)

// Status is what the trunk's status tool reports, in a form for programs
// that watch the trunk from beside it (the metrics collector) rather than
// through MCP: read at the moment it is asked for, so a scrape sees the
// servers as they are.
type Status struct {
	Servers []upstream.Status
	// DroppedNotifications counts notifications the host's message limit
	// or a full outbox cost; ParkedCalls the exchanges waiting between
	// rounds of input.
	DroppedNotifications int64
	ParkedCalls          int
	// Sessions counts the host sessions attached now: the stdio host is
	// one, each session of the HTTP downstream another (a stateless
	// request over HTTP, which has no session, is none).
	Sessions int
	// PinMode is trunk.pin in force; Pins counts, per server with any, the
	// items pinning has something to say about.
	PinMode string
	Pins    map[string]PinCounts
	// Profiles are trunk.profiles in force, each name with its
	// description.
	Profiles map[string]string
	// Store is the state store (trunk.state): nil when the trunk keeps
	// its state in memory.
	Store *StoreStatus
}

// StoreStatus is the state store as status shows it: what and where
// (never a password), and whether it answered last.
type StoreStatus struct {
	Kind  string // "embedded" or "redis"
	Where string
	Up    bool
	Since time.Time // when it last went up or down
	Error string    // why it is down
}

// PinCounts is how many of one server's items drifted from the lockfile,
// are withheld (enforce), and have findings.
type PinCounts struct {
	Drift, Withheld, Findings int
}
