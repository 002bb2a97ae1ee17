package testkit

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Redis is a redis-server of the test's own on a loopback port, with
// nothing saved to disk: every test that shares state between replicas
// gets a Redis no other test writes to. Stop and Start take it down and
// bring it back on the same address, for what a replica does without
// its store. Its methods are for the test's goroutine.
type Redis struct {
	Addr string // 127.0.0.1:PORT
	URL  string // redis://127.0.0.1:PORT/0

	t    testing.TB
	bin  string
	dir  string
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
	log  *Buffer       // what the server printed, for a failure's message
}

// StartRedis starts a redis-server for the test, stopped when it ends. A
// test without redis-server installed is skipped, saying what to install.
func StartRedis(t testing.TB) *Redis {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not installed (Debian: apt-get install redis-server); the tests of the shared store need it")
	}
	r := &Redis{t: t, bin: bin, dir: t.TempDir(), log: &Buffer{}}
	// A free port found by listening is free only until someone else takes
	// it: a server that cannot bind it tries another.
	for attempt := 0; ; attempt++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		r.Addr = ln.Addr().String()
		ln.Close()
		if err = r.start(); err == nil {
			break
		}
		if attempt == 4 {
			t.Fatalf("starting redis-server: %v\n%s", err, r.log.String())
		}
	}
	r.URL = "redis://" + r.Addr + "/0"
	t.Cleanup(r.Stop)
	return r
}

// Start brings a stopped server back on its address.
func (r *Redis) Start() {
	r.t.Helper()
	if r.cmd != nil {
		return
	}
	if err := r.start(); err != nil {
		r.t.Fatalf("starting redis-server again on %s: %v\n%s", r.Addr, err, r.log.String())
	}
}

// Stop ends the server (SIGTERM, then waits for it): until Start, every
// connection to its address is refused. Stopping a stopped server does
// nothing.
func (r *Redis) Stop() {
	if r.cmd == nil {
		return
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.done:
	case <-time.After(10 * time.Second):
		_ = r.cmd.Process.Kill()
		<-r.done
	}
	r.cmd = nil
}

// start runs redis-server on r.Addr and returns once it says it accepts
// connections, or with why it could not.
func (r *Redis) start() error {
	_, port, _ := net.SplitHostPort(r.Addr)
	cmd := exec.Command(r.bin, "--bind", "127.0.0.1", "--port", port, "--dir", r.dir,
		"--save", "", "--appendonly", "no", "--protected-mode", "no", "--loglevel", "notice")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.Stderr = r.log
	if err := cmd.Start(); err != nil {
		return err
	}
	ready := make(chan struct{})
	done := make(chan struct{})
	var once sync.Once
	go func() {
		defer close(done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			_, _ = r.log.Write([]byte(line + "\n"))
			if strings.Contains(line, "Ready to accept connections") {
				once.Do(func() { close(ready) })
			}
		}
		_, _ = io.Copy(io.Discard, out)
		_ = cmd.Wait()
	}()
	select {
	case <-ready:
		r.cmd, r.done = cmd, done
		return nil
	case <-done:
		return fmt.Errorf("redis-server on port %s exited before it was ready", strconv.Quote(port))
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		return errors.New("redis-server was not ready after 30s")
	}
}
