package main

import (
	"log/slog"
	"math"
	"runtime/debug"
	"testing"
)

// TestLimitMemory: a shared trunk's soft memory limit is its byte budget
// plus the overhead, and GOMEMLIMIT, when set, wins.
func TestLimitMemory(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	logger := slog.New(slog.DiscardHandler)

	t.Setenv("GOMEMLIMIT", "")
	limitMemory(64<<20, logger)
	if got := debug.SetMemoryLimit(-1); got != 64<<20+memoryOverhead {
		t.Errorf("limit %d, want %d", got, 64<<20+memoryOverhead)
	}

	debug.SetMemoryLimit(math.MaxInt64)
	t.Setenv("GOMEMLIMIT", "1GiB")
	limitMemory(64<<20, logger)
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("with GOMEMLIMIT set the limit became %d", got)
	}
}
