//go:build !windows

package stdio

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// command builds the server's command. exec finds a bare name on PATH.
// The server gets a process group of its own, so the whole tree it starts
// (npx -> node, sh -> server) can be signalled at once, and a Ctrl-C in the
// host's terminal does not reach it before the trunk has shut it down in
// order.
func command(name string, args, env []string, dir string) (*exec.Cmd, error) {
	cmd := exec.Command(name, args...)
	cmd.Env, cmd.Dir = env, dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setParentDeathSignal(cmd.SysProcAttr)
	return cmd, nil
}

// processGroup is the server's process group, named by the leader's pid.
type processGroup struct{ pid int }

func newProcessGroup() (*processGroup, error) { return &processGroup{}, nil }

// add records the leader once started; Setpgid has already made the group.
func (g *processGroup) add(p *os.Process) error {
	g.pid = p.Pid
	return nil
}

func (g *processGroup) terminate() error { return g.signal(syscall.SIGTERM) }
func (g *processGroup) kill() error      { return g.signal(syscall.SIGKILL) }

// close has nothing to release on Unix.
func (g *processGroup) close() {}

func (g *processGroup) signal(sig syscall.Signal) error {
	err := syscall.Kill(-g.pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil // already gone
	}
	return err
}

// envKey is the identity on Unix, where environment names are case-sensitive.
func envKey(k string) string { return k }
