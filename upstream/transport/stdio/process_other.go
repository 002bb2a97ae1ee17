//go:build !linux && !windows

package stdio

import "syscall"

// setParentDeathSignal has no equivalent outside Linux; there the process
// group and the ordered shutdown are what clean up.
func setParentDeathSignal(*syscall.SysProcAttr) {}

// awaitExit returns at once: cmd.Wait waits for the process.
func awaitExit(int) {}
