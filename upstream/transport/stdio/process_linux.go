package stdio

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// setParentDeathSignal asks the kernel to kill the server when the trunk
// dies without shutting it down (SIGKILL, a crash), so no upstream outlives
// its trunk.
func setParentDeathSignal(attr *syscall.SysProcAttr) {
	attr.Pdeathsig = syscall.SIGKILL
}

// awaitExit returns once the process pid has exited (it is not reaped:
// cmd.Wait still is to be called, and then returns at once), waiting in
// the runtime's poller on a pidfd instead of in a wait system call: a
// goroutine blocked in a system call holds an OS thread (its stacks, about
// 50 KB), one per idle server otherwise. Where the kernel has no
// non-blocking pidfd (before Linux 5.10) it returns at once, and cmd.Wait
// waits as it does elsewhere.
func awaitExit(pid int) {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	defer func() { _ = f.Close() }()
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	// A pidfd polls readable once its process has exited. An error (the
	// descriptor could not join the poller) leaves the wait to cmd.Wait.
	_ = rc.Read(func(fd uintptr) bool {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, 0)
		return err != nil || n > 0
	})
}
