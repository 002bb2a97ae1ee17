package main

// The processes a test started, found through /proc by the marker each
// carries in its environment (runEnv, tagEnv).

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// procInfo is one running process as /proc shows it.
type procInfo struct {
	pid     int
	state   string
	exe     string
	cmdline string
	env     map[string]string
}

func (p procInfo) String() string {
	return fmt.Sprintf("pid %d (%s) exe=%s cmdline=%q", p.pid, p.state, p.exe, p.cmdline)
}

// processes lists the live processes (zombies excluded) that match, apart
// from the test process itself. Outside Linux it returns nothing.
func processes(match func(procInfo) bool) []procInfo {
	if runtime.GOOS != "linux" {
		return nil
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var out []procInfo
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		dir := filepath.Join("/proc", e.Name())
		stat, err := os.ReadFile(filepath.Join(dir, "stat"))
		if err != nil {
			continue // gone already
		}
		p := procInfo{pid: pid, env: map[string]string{}}
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
			p.state = string(stat[i+2 : i+3])
		}
		if p.state == "Z" || p.state == "X" {
			continue
		}
		p.exe, _ = os.Readlink(filepath.Join(dir, "exe"))
		p.exe = strings.TrimSuffix(p.exe, " (deleted)")
		if cmdline, err := os.ReadFile(filepath.Join(dir, "cmdline")); err == nil {
			p.cmdline = strings.TrimSpace(strings.ReplaceAll(string(cmdline), "\x00", " "))
		}
		if environ, err := os.ReadFile(filepath.Join(dir, "environ")); err == nil {
			for _, kv := range strings.Split(string(environ), "\x00") {
				if k, v, ok := strings.Cut(kv, "="); ok && (k == runEnv || k == tagEnv) {
					p.env[k] = v
				}
			}
		}
		if match(p) {
			out = append(out, p)
		}
	}
	return out
}

// needProc skips a test that must see processes: only Linux has /proc.
func needProc(t testing.TB) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("this test inspects processes through /proc, which only Linux has")
	}
}

// waitForProcesses waits up to timeout for every matching process to be
// gone and returns those still there.
func waitForProcesses(match func(procInfo) bool, timeout time.Duration) []procInfo {
	var left []procInfo
	waitFor(context.Background(), timeout, func() bool {
		left = processes(match)
		return len(left) == 0
	})
	return left
}

// tagged matches the processes of one test.
func tagged(tag string) func(procInfo) bool {
	return func(p procInfo) bool { return p.env[tagEnv] == tag }
}

var tagSeq atomic.Int64

// newTag returns a tag unique to one test's processes, also across test
// binaries running at once on the machine (the pid tells them apart).
func newTag(t testing.TB) string {
	return fmt.Sprintf("%s#%d.%d", strings.ReplaceAll(t.Name(), "/", "."), os.Getpid(), tagSeq.Add(1))
}

// assertNoProcesses fails t if any process carrying tag is still running
// after grace.
func assertNoProcesses(t testing.TB, tag string, grace time.Duration) {
	t.Helper()
	if left := waitForProcesses(tagged(tag), grace); len(left) > 0 {
		for _, p := range left {
			t.Errorf("process left running: %s", p)
		}
	}
}
