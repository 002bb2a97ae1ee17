package main

import (
	"log/slog"
	"os"
	"runtime/debug"

	"github.com/mcptrunk/mcptrunk/proxy/httpserve"
)

// memoryOverhead is what a shared trunk's Go runtime needs beyond what it
// keeps for hosts (maxBufferedBytes): its catalog, the messages in flight
// and the runtime's own. docs/security.md states the overhead to plan for
// (this plus what RSS holds beyond the runtime's memory) with the soak's
// figures.
const memoryOverhead = 128 << 20

// limitMemory sets the Go runtime's soft memory limit of a shared trunk to
// what it may keep for hosts plus memoryOverhead, unless GOMEMLIMIT says
// otherwise. Without it the collector lets the heap grow to twice what is
// live, so a flood held within the byte budgets could still take the
// process to twice the budget. A soft limit never fails an allocation: past
// it the collector only runs more often (at most half the CPU).
func limitMemory(maxBufferedBytes int64, logger *slog.Logger) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	if maxBufferedBytes <= 0 {
		maxBufferedBytes = httpserve.DefaultMaxBufferedBytes
	}
	limit := maxBufferedBytes + memoryOverhead
	debug.SetMemoryLimit(limit)
	logger.Debug("soft memory limit set", "bytes", limit)
}
