//go:build linux || darwin

package main

import (
	"syscall"
	"testing"
)

// The data limit is the heap's budget and the runtime's space, except
// where the process's soft or hard limit is lower already: a limit set
// before the start is kept, never raised.
func TestDataLimitKeepsLowerLimits(t *testing.T) {
	const heap = 256 << 20
	const budget = heap + runtimeSpace
	const unlimited = ^uint64(0)
	for _, c := range []struct {
		name      string
		old, want syscall.Rlimit
	}{
		{"unlimited", syscall.Rlimit{Cur: unlimited, Max: unlimited}, syscall.Rlimit{Cur: budget, Max: budget}},
		{"soft lower", syscall.Rlimit{Cur: 100 << 20, Max: unlimited}, syscall.Rlimit{Cur: 100 << 20, Max: budget}},
		{"both lower", syscall.Rlimit{Cur: 100 << 20, Max: 200 << 20}, syscall.Rlimit{Cur: 100 << 20, Max: 200 << 20}},
		{"hard lower", syscall.Rlimit{Cur: 200 << 20, Max: 200 << 20}, syscall.Rlimit{Cur: 200 << 20, Max: 200 << 20}},
	} {
		if got := dataLimit(heap, c.old); got != c.want {
			t.Errorf("%s: %+v gives %+v, want %+v", c.name, c.old, got, c.want)
		}
	}
}
