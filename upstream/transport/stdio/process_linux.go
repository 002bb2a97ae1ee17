package stdio

import "syscall"

// setParentDeathSignal asks the kernel to kill the server when the trunk
// dies without shutting it down (SIGKILL, a crash), so no upstream outlives
// its trunk.
func setParentDeathSignal(attr *syscall.SysProcAttr) {
	attr.Pdeathsig = syscall.SIGKILL
}
