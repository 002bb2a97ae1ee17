package main

import (
	"context"
	"log/slog"
	"os"
	"runtime/debug"
	"time"

	"github.com/mcptrunk/mcptrunk/proxy"
	"github.com/mcptrunk/mcptrunk/proxy/httpserve"
)

// memoryOverhead is what a shared trunk's Go runtime needs beyond what it
// keeps for hosts (maxBufferedBytes): its catalog, the messages in flight
// and the runtime's own. docs/security.md states the overhead to plan for
// (this plus what RSS holds beyond the runtime's memory) with the soak's
// figures.
const memoryOverhead = 128 << 20

// limitMemory sets the Go runtime's soft memory limit of a shared trunk to
// what it may keep for hosts (maxBufferedBytes, and kept, the tool results
// it keeps for them to read: proxy.Trunk.KeptResultsBound) plus
// memoryOverhead, unless GOMEMLIMIT says
// otherwise. Without it the collector lets the heap grow to twice what is
// live, so a flood held within the byte budgets could still take the
// process to twice the budget. A soft limit never fails an allocation: past
// it the collector only runs more often (at most half the CPU).
func limitMemory(maxBufferedBytes, kept int64, logger *slog.Logger) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	if maxBufferedBytes <= 0 {
		maxBufferedBytes = httpserve.DefaultMaxBufferedBytes
	}
	limit := maxBufferedBytes + kept + memoryOverhead
	debug.SetMemoryLimit(limit)
	logger.Debug("soft memory limit set", "bytes", limit)
}

// startupRelease is how long after the servers settle releaseAfterStartup
// waits: long enough for a host's first lists, which are part of the burst.
const startupRelease = 2 * time.Second

// releaseAfterStartup calls release (debug.FreeOSMemory) once, after
// every server has started or failed and a further wait (startupRelease),
// unless ctx ends first. Starting servers decodes their lists and builds
// the catalog many times over, and hosts list the tools right after the
// handshake: the heap peaks at about twice what stays live (the
// collector's goal), and the runtime keeps what it got up to that goal, so
// an idle trunk's RSS would keep the peak for good (20 idle servers of 50
// tools: about 5 MB). One collection, once, costs a few milliseconds.
func releaseAfterStartup(ctx context.Context, t *proxy.Trunk, wait time.Duration, release func()) {
	select {
	case <-t.Started():
	case <-ctx.Done():
		return
	}
	select {
	case <-t.Fleet().Settled():
	case <-ctx.Done():
		return
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-timer.C:
		release()
	case <-ctx.Done():
	}
}
