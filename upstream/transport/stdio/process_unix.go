//go:build !windows

package stdio

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// setProcessGroup puts the server in a process group of its own, so the
// whole tree it starts (npx -> node, sh -> server) can be signalled at once,
// and a Ctrl-C in the host's terminal does not reach it before the trunk has
// shut it down in order.
func setProcessGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	setParentDeathSignal(cmd.SysProcAttr)
}

func terminateGroup(p *os.Process) error { return signalGroup(p, syscall.SIGTERM) }
func killGroup(p *os.Process) error      { return signalGroup(p, syscall.SIGKILL) }

func signalGroup(p *os.Process, sig syscall.Signal) error {
	err := syscall.Kill(-p.Pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil // already gone
	}
	return err
}

// resolveCommand is the identity on Unix: exec finds the command on PATH.
func resolveCommand(name string, args []string) (string, []string) { return name, args }

// envKey is the identity on Unix, where environment names are case-sensitive.
func envKey(k string) string { return k }
