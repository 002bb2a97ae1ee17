//go:build !linux && !darwin

package child

import "os"

// peakMemory is 0: the process's peak memory is not known here.
func peakMemory(*os.ProcessState) int64 { return 0 }
