package main

import (
	"context"
	"log/slog"
	"math"
	"os"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/proxy"
)

// TestLimitMemory: a shared trunk's soft memory limit is its byte budget,
// plus the results it keeps, plus the overhead, and GOMEMLIMIT, when set,
// wins.
func TestLimitMemory(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	logger := slog.New(slog.DiscardHandler)

	t.Setenv("GOMEMLIMIT", "")
	limitMemory(64<<20, 0, logger)
	if got := debug.SetMemoryLimit(-1); got != 64<<20+memoryOverhead {
		t.Errorf("limit %d, want %d", got, 64<<20+memoryOverhead)
	}
	limitMemory(64<<20, 32<<20, logger)
	if got := debug.SetMemoryLimit(-1); got != 96<<20+memoryOverhead {
		t.Errorf("with results kept: limit %d, want %d", got, 96<<20+memoryOverhead)
	}

	debug.SetMemoryLimit(math.MaxInt64)
	t.Setenv("GOMEMLIMIT", "1GiB")
	limitMemory(64<<20, 0, logger)
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("with GOMEMLIMIT set the limit became %d", got)
	}
}

// TestReleaseAfterStartup: the startup's memory is released once, after
// the servers settle and the wait; a trunk that never starts releases
// nothing, and its wait ends with ctx.
func TestReleaseAfterStartup(t *testing.T) {
	cfg, err := config.Parse(strings.NewReader(`{"mcpServers":{}}`), os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	tr := proxy.New(cfg, nil)
	defer tr.Close(context.Background())

	unstarted, stop := context.WithCancel(context.Background())
	returned := make(chan struct{})
	go func() {
		releaseAfterStartup(unstarted, tr, 0, func() { t.Error("released before the trunk started") })
		close(returned)
	}()
	stop()
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("releaseAfterStartup did not return when its ctx ended")
	}

	released := make(chan struct{}, 2)
	go releaseAfterStartup(context.Background(), tr, time.Millisecond, func() { released <- struct{}{} })
	tr.Start(nil, "")
	select {
	case <-released:
	case <-time.After(10 * time.Second):
		t.Fatal("nothing released after the servers settled")
	}
}
