//go:build linux || darwin

package main

import "syscall"

// runtimeSpace is the writable memory the Go runtime takes beside the
// heap's budget: its own structures, goroutine stacks, the heap's growth
// between two collections.
const runtimeSpace = 128 << 20

// limitMemory bounds the process's data (RLIMIT_DATA: on Linux, every
// private writable mapping, which is where the Go heap lives; unlike
// RLIMIT_AS it does not count the address space the runtime reserves
// and never uses) at the heap's budget and the runtime's space: an
// allocation past it fails, and the runtime ends the process with "out of
// memory". Darwin does not apply RLIMIT_DATA to mappings: there the
// collector's limit and the heap's watch are the only bounds.
// A lower limit set on the process already (ulimit -d) is kept.
func limitMemory(heap int64) error {
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_DATA, &old); err != nil {
		return err
	}
	limit := dataLimit(heap, old)
	return syscall.Setrlimit(syscall.RLIMIT_DATA, &limit)
}

// dataLimit is the RLIMIT_DATA for a heap's budget given the process's
// current one: each of the soft and hard limits is the budget and the
// runtime's space, or the current one where that is lower, so a limit
// lowered before the start (soft or hard alone) is never raised.
func dataLimit(heap int64, old syscall.Rlimit) syscall.Rlimit {
	limit := uint64(heap + runtimeSpace)
	return syscall.Rlimit{Cur: min(limit, old.Cur), Max: min(limit, old.Max)}
}
