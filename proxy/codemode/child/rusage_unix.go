//go:build linux || darwin

package child

import (
	"os"
	"runtime"
	"syscall"
)

// peakMemory is the most memory the ended process held at once (its
// maximum resident set), in bytes; 0 when unknown.
func peakMemory(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return ru.Maxrss // bytes there, KiB on Linux
	}
	return ru.Maxrss << 10
}
