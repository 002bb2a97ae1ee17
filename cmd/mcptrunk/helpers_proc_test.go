package main

// The one way a test runs a long-lived process: the trunk (`serve` over
// stdio or HTTP), an upstream run directly, HAProxy. Every host harness
// (rawConn, host, httpTrunk) starts its process here, so each ends the same
// way and is checked the same way afterwards.

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// procGrace is how long a process has to exit once told to (stdin EOF or
// a signal) before it is killed and the test fails.
const procGrace = 15 * time.Second

// proc is a process a test runs for its whole length, with its stderr kept.
type proc struct {
	name   string
	cmd    *exec.Cmd
	tag    string // marks it and its children (tagEnv), for the leak checks
	stderr *syncBuffer
	// stdin and stdout are the test's ends of the process's stdio when it
	// was started with pipes (a stdio host talks to it), else nil.
	stdin  io.WriteCloser
	stdout io.ReadCloser
	exited chan struct{} // closed once it has exited and was waited for
	t      testing.TB
	stop   os.Signal // ends it when it has no pipes

	stdinMu sync.Mutex // serialises writes to stdin with its close
	mu      sync.Mutex
	waitErr error
}

// procOptions says how a process is run and ended.
type procOptions struct {
	// pipes: give the process stdin and stdout pipes of the test's; it is
	// ended by closing its stdin, as a host ends a stdio session.
	pipes bool
	// stop is the signal that ends a process without pipes (nil:
	// os.Interrupt).
	stop os.Signal
}

// startProc starts cmd, its processes marked with the tag already in its
// environment or a fresh one, and ends it when the test ends: stdin EOF
// (pipes) or the stop signal, a kill after procGrace that fails the test.
// Then a trunk must have reported no race, and no process of its tag may
// be left.
func startProc(t testing.TB, name string, cmd *exec.Cmd, opts procOptions) *proc {
	t.Helper()
	p := &proc{name: name, cmd: cmd, stderr: &syncBuffer{}, exited: make(chan struct{}), t: t, stop: opts.stop}
	if p.stop == nil {
		p.stop = os.Interrupt
	}
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	for _, kv := range cmd.Env {
		if v, ok := strings.CutPrefix(kv, tagEnv+"="); ok {
			p.tag = v
		}
	}
	if p.tag == "" {
		p.tag = newTag(t)
		cmd.Env = append(cmd.Env, tagEnv+"="+p.tag)
	}
	cmd.Stderr = p.stderr
	var childIn, childOut *os.File
	if opts.pipes {
		// os.Pipe rather than cmd.StdinPipe/StdoutPipe: Wait must not
		// close the test's ends while a reader still drains them.
		var err error
		var in, out *os.File
		if childIn, in, err = os.Pipe(); err != nil {
			t.Fatal(err)
		}
		if out, childOut, err = os.Pipe(); err != nil {
			t.Fatal(err)
		}
		cmd.Stdin, cmd.Stdout = childIn, childOut
		p.stdin, p.stdout = in, out
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	if opts.pipes {
		_ = childIn.Close()
		_ = childOut.Close()
	}
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.waitErr = err
		p.mu.Unlock()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.shutdown(procGrace)
		if p.stdout != nil {
			_ = p.stdout.Close()
		}
		if cmd.Path == trunkBin {
			checkNoRace(t, p.stderr)
		}
		assertNoProcesses(t, p.tag, 5*time.Second)
	})
	return p
}

// shutdown ends the process as its host would (stdin EOF, or the stop
// signal), waits up to grace for it to exit, then kills it and fails the
// test.
func (p *proc) shutdown(grace time.Duration) {
	if p.stdin != nil {
		p.closeStdin()
	} else if p.alive() {
		_ = p.cmd.Process.Signal(p.stop)
	}
	if !p.waitExit(grace) {
		p.t.Errorf("%s did not exit within %s of being told to; killing it\nstderr:\n%s", p.name, grace, tail(p.stderr.String(), 3000))
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// write writes one line to the process's stdin.
func (p *proc) write(line []byte) error {
	p.stdinMu.Lock()
	defer p.stdinMu.Unlock()
	_, err := p.stdin.Write(append(line, '\n'))
	return err
}

// closeStdin ends the session the way a host does.
func (p *proc) closeStdin() {
	p.stdinMu.Lock()
	defer p.stdinMu.Unlock()
	_ = p.stdin.Close()
}

// waitExit waits for the process to exit; false if it did not in time.
func (p *proc) waitExit(timeout time.Duration) bool {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-p.exited:
		return true
	case <-timer.C:
		return false
	}
}

// alive reports whether the process is still running.
func (p *proc) alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// kill ends the process with SIGKILL and waits for it.
func (p *proc) kill(t testing.TB) {
	t.Helper()
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatalf("killing %s: %v", p.name, err)
	}
	<-p.exited
}

// exitErr is how the process ended (nil for exit status 0).
func (p *proc) exitErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var exit *exec.ExitError
	if errors.As(p.waitErr, &exit) {
		return exit
	}
	return p.waitErr
}

// ctx is parent, ended early if the process exits: a wait for something
// it should do stops at once when it cannot happen any more.
func (p *proc) ctx(parent context.Context) context.Context {
	ctx, cancel := context.WithCancel(parent)
	go func() {
		select {
		case <-p.exited:
		case <-ctx.Done():
		}
		cancel()
	}()
	return ctx
}
