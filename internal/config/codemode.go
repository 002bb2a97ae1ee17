package config

import (
	"encoding/json"
	"runtime"
	"time"
)

// CodeMode is trunk.codeMode: when Enabled, the trunk offers
// mcp__trunk__run_code, which runs a short JavaScript program whose calls
// are the caller's own, and mcp__trunk__code_api, which describes the
// caller's tools as TypeScript declarations (docs/code-mode.md). The
// budgets bound one run; 0 (absent) is the default, which WithDefaults
// fills in.
type CodeMode struct {
	Enabled bool `json:"enabled,omitempty"`
	// WallTime bounds a run from start to result (default
	// DefaultCodeWallTime); the program is interrupted at it.
	WallTime Duration `json:"wallTime,omitzero"`
	// MaxCalls bounds the tool calls of one run (DefaultCodeMaxCalls).
	MaxCalls int `json:"maxCalls,omitempty"`
	// MaxInFlight bounds a run's calls in flight at once
	// (DefaultCodeMaxInFlight); more wait their turn.
	MaxInFlight int `json:"maxInFlight,omitempty"`
	// MaxResultBytes bounds the program's result as JSON, MaxLogBytes what
	// it writes with console.log (DefaultCodeMaxResultBytes,
	// DefaultCodeMaxLogBytes).
	MaxResultBytes int `json:"maxResultBytes,omitempty"`
	MaxLogBytes    int `json:"maxLogBytes,omitempty"`
	// MaxMemoryBytes bounds the memory of the process a run runs in
	// (DefaultCodeMaxMemoryBytes): a program that allocates past it ends
	// with an error naming it, and nothing else is affected.
	MaxMemoryBytes int64 `json:"maxMemoryBytes,omitempty"`
	// MaxRuns bounds the runs running at once across the trunk, every
	// caller's together (DefaultCodeMaxRuns): each is a process of up to
	// MaxMemoryBytes, so many callers at once could exhaust the host's
	// memory. A run past it waits its turn, within its WallTime.
	MaxRuns int `json:"maxRuns,omitempty"`
}

// DefaultCodeMaxRuns is trunk.codeMode.maxRuns' default: a runner per
// CPU, at least one.
func DefaultCodeMaxRuns() int { return max(1, runtime.NumCPU()) }

// The defaults of trunk.codeMode's budgets: a run is a handful of calls
// done in seconds, and its result is meant to be small (that is the point
// of code mode: only what the program returns reaches the model).
const (
	DefaultCodeWallTime       = 30 * time.Second
	DefaultCodeMaxCalls       = 100
	DefaultCodeMaxInFlight    = 8
	DefaultCodeMaxResultBytes = 64 << 10
	DefaultCodeMaxLogBytes    = 16 << 10
	DefaultCodeMaxMemoryBytes = 256 << 20
)

// MinCodeMaxMemoryBytes is the least trunk.codeMode.maxMemoryBytes: the
// runner's runtime and engine take about 10 MiB before a program runs.
const MinCodeMaxMemoryBytes = 16 << 20

type rawCodeMode struct {
	Enabled        json.RawMessage `json:"enabled"`
	WallTime       json.RawMessage `json:"wallTime"`
	MaxCalls       json.RawMessage `json:"maxCalls"`
	MaxInFlight    json.RawMessage `json:"maxInFlight"`
	MaxResultBytes json.RawMessage `json:"maxResultBytes"`
	MaxLogBytes    json.RawMessage `json:"maxLogBytes"`
	MaxMemoryBytes json.RawMessage `json:"maxMemoryBytes"`
	MaxRuns        json.RawMessage `json:"maxRuns"`
}

// WithDefaults is c with each budget left 0 set to its default.
func (c CodeMode) WithDefaults() CodeMode {
	for _, b := range []struct {
		v   *int
		def int
	}{{&c.MaxCalls, DefaultCodeMaxCalls}, {&c.MaxInFlight, DefaultCodeMaxInFlight},
		{&c.MaxResultBytes, DefaultCodeMaxResultBytes}, {&c.MaxLogBytes, DefaultCodeMaxLogBytes}} {
		if *b.v == 0 {
			*b.v = b.def
		}
	}
	if c.WallTime == 0 {
		c.WallTime = Duration(DefaultCodeWallTime)
	}
	if c.MaxMemoryBytes == 0 {
		c.MaxMemoryBytes = DefaultCodeMaxMemoryBytes
	}
	if c.MaxRuns == 0 {
		c.MaxRuns = DefaultCodeMaxRuns()
	}
	return c
}

// codeMode decodes and validates trunk.codeMode; a budget absent or 0 is
// left 0 (the default).
func (p *fieldErrs) codeMode(raw json.RawMessage, field string) CodeMode {
	var rc rawCodeMode
	var c CodeMode
	if !p.object(raw, field, &rc) {
		return c
	}
	c.Enabled = p.boolean(rc.Enabled, field+".enabled")
	c.WallTime = p.duration(rc.WallTime, field+".wallTime")
	for _, n := range []struct {
		raw  json.RawMessage
		name string
		to   *int
	}{{rc.MaxCalls, "maxCalls", &c.MaxCalls}, {rc.MaxInFlight, "maxInFlight", &c.MaxInFlight},
		{rc.MaxResultBytes, "maxResultBytes", &c.MaxResultBytes}, {rc.MaxLogBytes, "maxLogBytes", &c.MaxLogBytes},
		{rc.MaxRuns, "maxRuns", &c.MaxRuns}} {
		v, ok := p.integer(n.raw, field+"."+n.name)
		switch {
		case !ok || v == 0:
		case v < 0:
			p.addf(field+"."+n.name, "must be >= 1, got %d", v)
		default:
			*n.to = v
		}
	}
	// Below a few MiB the runner's own runtime would not fit.
	switch v, ok := p.integer(rc.MaxMemoryBytes, field+".maxMemoryBytes"); {
	case !ok || v == 0:
	case v < MinCodeMaxMemoryBytes:
		p.addf(field+".maxMemoryBytes", "must be >= %d (%d MiB), got %d", MinCodeMaxMemoryBytes, MinCodeMaxMemoryBytes>>20, v)
	default:
		c.MaxMemoryBytes = int64(v)
	}
	return c
}
