package main

// What the tests run: config files naming the example servers, the mcptrunk
// command line, and the capture of a process's output.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// server is one entry of mcpServers.
type server map[string]any

func notesServer(args ...string) server {
	return server{"command": notesBin, "args": append([]string{}, args...)}
}

func weatherServer(args ...string) server {
	return server{"command": weatherBin, "args": append([]string{}, args...)}
}

func chaosServer(args ...string) server {
	return server{"command": chaosBin, "args": append([]string{}, args...)}
}

// pin2025 pins an upstream to MCP 2025-11-25 (initialize, no
// server/discover probe first). The example servers and the conformance
// server speak 2026-07-28 too, which auto mode would pick; a test that
// checks the 2025-11-25 wire on the upstream's side (initialize,
// logging/setLevel, resources/subscribe or server-sent requests on its tap,
// params exactly as the host sent them) pins its upstream with it.
func pin2025(s server) server {
	s["protocolVersion"] = "2025-11-25"
	return s
}

// pinStateless pins an upstream to MCP 2026-07-28 whatever the host
// speaks (auto mode mirrors a 2025-era host).
func pinStateless(s server) server {
	s["protocolVersion"] = "2026-07-28"
	return s
}

// withFields returns s with extra fields set.
func withFields(s server, extra map[string]any) server {
	out := server{}
	for k, v := range s {
		out[k] = v
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

// writeConfig writes a config with the given servers (and optional trunk
// section) into a fresh temporary directory and returns its path.
func writeConfig(t testing.TB, servers map[string]server, trunk map[string]any) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mcptrunk.json")
	writeConfigAt(t, path, servers, trunk)
	return path
}

// writeConfigAt writes a config with the given servers (and optional trunk
// section) at path, over what is there.
func writeConfigAt(t testing.TB, path string, servers map[string]server, trunk map[string]any) {
	t.Helper()
	cfg := map[string]any{"mcpServers": servers}
	if trunk != nil {
		cfg["trunk"] = trunk
	}
	data, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// ---- output capture ----

// syncBuffer collects a process's output for one writer and concurrent
// readers. It keeps the first maxKept bytes and counts the rest (a server
// flooding stderr through mcptrunk's log must not exhaust the test's
// memory), but notices a race report anywhere.
type syncBuffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	total int64
	raced bool
	carry []byte // the end of the previous write, for a marker split across writes
}

const maxKept = 8 << 20

const raceMarker = "WARNING: DATA RACE"

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.total += int64(len(p))
	if !b.raced {
		b.raced = bytes.Contains(append(b.carry, p...), []byte(raceMarker))
		n := min(len(p), len(raceMarker))
		b.carry = append(b.carry[:0], p[len(p)-n:]...)
	}
	if room := maxKept - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// String returns what was kept.
func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.total > int64(b.buf.Len()) {
		return b.buf.String() + fmt.Sprintf("\n[... %d more bytes not kept]\n", b.total-int64(b.buf.Len()))
	}
	return b.buf.String()
}

// Len is how many bytes were written.
func (b *syncBuffer) Len() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.total
}

func (b *syncBuffer) sawRace() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.raced
}

// checkNoRace fails t when a race-enabled mcptrunk reported a data race.
func checkNoRace(t testing.TB, stderr *syncBuffer) {
	t.Helper()
	if stderr.sawRace() {
		t.Errorf("mcptrunk reported a data race:\n%s", stderr.String())
	}
}

// ---- commands ----

// trunkCmd returns the command that runs mcptrunk with args, its
// processes (and every upstream's) marked with tag.
func trunkCmd(tag string, args ...string) *exec.Cmd {
	cmd := exec.Command(trunkBin, args...)
	cmd.Env = append(os.Environ(), tagEnv+"="+tag)
	return cmd
}

// runCLI runs an mcptrunk subcommand to completion and returns its stdout,
// stderr and exit status.
func runCLI(t testing.TB, timeout time.Duration, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runCLIInput(t, timeout, "", args...)
}

// runCLIInput is runCLI with stdin, for commands that ask a question.
func runCLIInput(t testing.TB, timeout time.Duration, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return startCLI(t, stdin, args...).wait(t, timeout)
}

// cliRun is an mcptrunk subcommand started by startCLI: several may run at
// once, each waited for on the test's goroutine. It runs through startProc,
// which also ends it (and fails the test) should the test end first.
type cliRun struct {
	args []string
	p    *proc
	out  bytes.Buffer
}

// startCLI starts an mcptrunk subcommand with stdin.
func startCLI(t testing.TB, stdin string, args ...string) *cliRun {
	t.Helper()
	r := &cliRun{args: args}
	cmd := trunkCmd(newTag(t), args...)
	cmd.Stdin, cmd.Stdout = strings.NewReader(stdin), &r.out
	r.p = startProc(t, "mcptrunk "+strings.Join(args, " "), cmd, procOptions{})
	return r
}

// wait waits for the run to end, within timeout of now, and returns its
// stdout, stderr and exit status. No process of the run may be left.
func (r *cliRun) wait(t testing.TB, timeout time.Duration) (stdout, stderr string, code int) {
	t.Helper()
	if !r.p.waitExit(timeout) {
		r.p.kill(t)
		t.Fatalf("mcptrunk %s did not finish within %s\nstdout:\n%s\nstderr:\n%s", strings.Join(r.args, " "), timeout, r.out.String(), r.p.stderr.String())
	}
	err := r.p.exitErr()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("mcptrunk %s: %v", strings.Join(r.args, " "), err)
	}
	assertNoProcesses(t, r.p.tag, 5*time.Second)
	return r.out.String(), r.p.stderr.String(), code
}
