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
	limit := min(uint64(heap+runtimeSpace), old.Max)
	return syscall.Setrlimit(syscall.RLIMIT_DATA, &syscall.Rlimit{Cur: limit, Max: limit})
}
