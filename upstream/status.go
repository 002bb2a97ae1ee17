package upstream

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/naming"
)

// callStats counts the requests a Client forwarded.
type callStats struct {
	calls, errors, nanos atomic.Int64
}

func (s *callStats) record(d time.Duration, failed bool) {
	s.calls.Add(1)
	s.nanos.Add(int64(d))
	if failed {
		s.errors.Add(1)
	}
}

// Status is a server's state as reported by list, check and the trunk's
// status tool.
type Status struct {
	Server          string           `json:"server"`
	State           State            `json:"state"`
	Error           string           `json:"error,omitempty"`
	Transport       config.Transport `json:"transport"`
	Since           time.Time        `json:"since"`
	UptimeSeconds   float64          `json:"uptimeSeconds,omitempty"` // while ready
	Restarts        int64            `json:"restarts"`
	ProtocolVersion string           `json:"protocolVersion,omitempty"`
	// Protocol is the revision the trunk speaks to the server (the same
	// value; the name list and check print).
	Protocol       string          `json:"protocol,omitempty"`
	ServerInfo     json.RawMessage `json:"serverInfo,omitempty"`
	Tools          int             `json:"tools"`
	Prompts        int             `json:"prompts"`
	Resources      int             `json:"resources"`
	Templates      int             `json:"resourceTemplates"`
	Apps           int             `json:"apps,omitempty"` // its ui:// resources: the MCP Apps it ships
	Calls          int64           `json:"calls"`
	CallErrors     int64           `json:"callErrors"`
	MeanCallMillis float64         `json:"meanCallMillis"`
	// Lazy: the server starts on its first request. CachedAt is when the
	// catalog in the cache was discovered (CacheAgeSeconds ago), LastUse
	// when a request last ended (SinceLastUseSeconds ago); zero when none.
	Lazy                bool      `json:"lazy,omitempty"`
	IdleTimeout         string    `json:"idleTimeout,omitempty"`
	CachedAt            time.Time `json:"cachedAt,omitzero"`
	CacheAgeSeconds     float64   `json:"cacheAgeSeconds,omitempty"`
	LastUse             time.Time `json:"lastUse,omitzero"`
	SinceLastUseSeconds float64   `json:"sinceLastUseSeconds,omitempty"`
	// LazyStarts counts the times a request started the sleeping server,
	// IdleStops the times its idleTimeout stopped it (neither counts the
	// start and stop that only fill the catalog cache). Like Restarts,
	// they count from the Client's creation: a reload that replaces the
	// server starts them again.
	LazyStarts int64 `json:"lazyStarts,omitempty"`
	IdleStops  int64 `json:"idleStops,omitempty"`
	Tasks      int   `json:"tasks,omitempty"` // running now, as proxy/tasks.Ledger knows them: not the Client's
	// MaxInFlight is the server's cap on calls in flight (0: none);
	// InFlight and Queued are the calls holding a slot and waiting for one.
	MaxInFlight int `json:"maxInFlight,omitempty"`
	InFlight    int `json:"inFlight,omitempty"`
	Queued      int `json:"queued,omitempty"`
	// Breaker is the circuit breaker's state, "" without one:
	// BreakerClosed, BreakerOpen (calls fail at once until BreakerRetryAt)
	// or BreakerHalfOpen (the next call tries the server). FailuresInRow
	// counts the calls without an answer since the last answer,
	// BreakerOpened the times it opened.
	Breaker        string    `json:"breaker,omitempty"`
	BreakerRetryAt time.Time `json:"breakerRetryAt,omitzero"`
	FailuresInRow  int       `json:"failuresInRow,omitempty"`
	BreakerOpened  int64     `json:"breakerOpened,omitempty"`
}

// Status reports the server's state, catalog sizes and call statistics.
func (c *Client) Status() Status {
	c.mu.Lock()
	s := Status{
		Server:          c.id,
		State:           c.state,
		Transport:       c.spec.Type,
		Since:           c.since,
		ProtocolVersion: c.init.ProtocolVersion,
		Protocol:        c.init.ProtocolVersion,
		ServerInfo:      c.init.ServerInfo,
		Tools:           len(c.catalog.Tools),
		Prompts:         len(c.catalog.Prompts),
		Resources:       len(c.catalog.Resources),
		Templates:       len(c.catalog.Templates),
		Apps:            countApps(c.catalog.Resources),
	}
	if c.err != nil {
		s.Error = c.err.Error()
	}
	s.Lazy = c.spec.Lazy
	if d := c.spec.IdleTimeout.D(); d > 0 {
		s.IdleTimeout = d.String()
	}
	if c.lazy.cacheOK {
		s.CachedAt = c.lazy.cachedAt
	}
	if c.stats.calls.Load() > 0 {
		s.LastUse = c.lazy.lastUse
	}
	c.mu.Unlock()
	if !s.CachedAt.IsZero() {
		s.CacheAgeSeconds = time.Since(s.CachedAt).Round(time.Second).Seconds()
	}
	if !s.LastUse.IsZero() {
		s.SinceLastUseSeconds = time.Since(s.LastUse).Round(time.Millisecond).Seconds()
	}
	if s.State == StateReady {
		s.UptimeSeconds = time.Since(s.Since).Round(time.Millisecond).Seconds()
	}
	s.Restarts = c.restarts.Load()
	s.LazyStarts, s.IdleStops = c.lazy.starts.Load(), c.lazy.idleStops.Load()
	g := c.guard.status()
	s.MaxInFlight, s.InFlight, s.Queued = c.guard.max, g.inFlight, g.waiting
	s.Breaker, s.BreakerRetryAt, s.FailuresInRow, s.BreakerOpened = g.breaker, g.retryAt, g.consecutive, g.opened
	s.Calls = c.stats.calls.Load()
	s.CallErrors = c.stats.errors.Load()
	if s.Calls > 0 {
		s.MeanCallMillis = float64(c.stats.nanos.Load()) / float64(s.Calls) / 1e6
	}
	return s
}

// countApps counts the resources that are MCP Apps (ui:// URIs).
func countApps(resources []Item) int {
	n := 0
	for _, r := range resources {
		if naming.IsUIURI(r.Key) {
			n++
		}
	}
	return n
}

// Protection says in one line what the server's maxInFlight and breaker
// are doing now, "" for a server with neither: for check and the status
// page.
func (s Status) Protection() string {
	var parts []string
	if s.MaxInFlight > 0 {
		parts = append(parts, fmt.Sprintf("maxInFlight %d: %d in flight, %d waiting", s.MaxInFlight, s.InFlight, s.Queued))
	}
	switch s.Breaker {
	case "":
	case BreakerOpen:
		parts = append(parts, fmt.Sprintf("breaker open after %d calls in a row without an answer: calls fail at once until %s",
			s.FailuresInRow, s.BreakerRetryAt.UTC().Format(time.TimeOnly)))
	default:
		b := "breaker " + s.Breaker
		if s.BreakerOpened > 0 {
			b += fmt.Sprintf(" (opened %d times)", s.BreakerOpened)
		}
		parts = append(parts, b)
	}
	return strings.Join(parts, "; ")
}
