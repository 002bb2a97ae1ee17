//go:build !windows

package main

// The fault suite (see faults_recovery_test.go): upstreams that resist
// shutdown, and a trunk killed outright.

import (
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestTrunkKilledLeavesNoUpstream: mcptrunk killed with SIGKILL cannot shut
// its servers down; the kernel ends them (Pdeathsig), even those that
// ignore stdin EOF and SIGTERM, and one still in its handshake.
func TestTrunkKilledLeavesNoUpstream(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Pdeathsig is Linux only")
	}
	t.Parallel()
	ctx := testCtx(t, 60*time.Second)
	cfg := writeConfig(t, map[string]server{
		"notes":    notesServer(),
		"stubborn": chaosServer("-mode", "ok", "-ignore-eof", "-ignore-sigterm", "-max-life", "30s"),
		"wedged": {"command": chaosBin, "args": []string{"-mode", "hang-init", "-ignore-eof", "-ignore-sigterm", "-max-life", "30s"},
			"timeouts": map[string]any{"connect": "50s"}},
	}, map[string]any{"startupWait": "1s"})
	c := startRawTrunk(t, ctx, cfg)
	// A call to a server still in its first start is refused ("is
	// starting"), and startupWait (1 s, for the wedged one's sake) is not
	// always enough for the stubborn one on a loaded machine.
	if _, err := waitStderrLine(ctx, c.stderr, 30*time.Second, "server ready", "server=stubborn"); err != nil {
		t.Fatalf("the stubborn server did not start: %v", err)
	}
	res := c.result(ctx, "tools/call", map[string]any{"name": "mcp__stubborn__ping_tool"})
	if !strings.Contains(string(res), "pong") {
		t.Fatalf("mcp__stubborn__ping_tool: %s", res)
	}
	ups := processes(func(p procInfo) bool { return tagged(c.tag)(p) && p.exe != trunkBin })
	if len(ups) != 3 {
		t.Fatalf("want 3 upstream processes before the kill, found %v", ups)
	}

	start := time.Now()
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if !c.waitExit(5 * time.Second) {
		t.Fatal("mcptrunk did not die of SIGKILL")
	}
	left := waitForProcesses(tagged(c.tag), 2*time.Second)
	took := time.Since(start)
	for _, p := range left {
		t.Errorf("still running 2s after mcptrunk was killed: %s", p)
	}
	if len(left) > 0 {
		// Do not leak them into the rest of the run.
		for _, p := range left {
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
		}
	}
	t.Logf("SIGKILL: every upstream (%d) gone %s after mcptrunk was killed", len(ups), roundMS(took))
}

// TestShutdownEscalation: at shutdown each upstream gets its stdin closed,
// then SIGTERM after stdinGrace (2s), then SIGKILL after termGrace (2s). A
// server that takes its time, or ignores EOF, or ignores both, is gone
// within that ladder (+ slack), and mcptrunk exits cleanly with nothing
// left behind. A healthy server next to it exits at once meanwhile.
func TestShutdownEscalation(t *testing.T) {
	t.Parallel()
	const stdinGrace, termGrace = 2 * time.Second, 2 * time.Second
	// slack is what a loaded machine adds (a full run once took 8 s on the
	// 4 s ladder, which took 4.008 s alone); the lower bounds are exact.
	const slack = 5 * time.Second
	for _, tc := range []struct {
		name     string
		args     []string
		min, max time.Duration // how long the shutdown takes
		log      string        // a line the trunk's log must have, if any
	}{
		{"eof-delay-1s", []string{"-eof-delay", "1s"}, time.Second, stdinGrace + slack, ""},
		{"eof-delay-3s", []string{"-eof-delay", "3s"}, stdinGrace, stdinGrace + slack, ""},
		{"ignore-eof", []string{"-ignore-eof"}, stdinGrace, stdinGrace + slack, ""},
		{"ignore-eof-and-sigterm", []string{"-ignore-eof", "-ignore-sigterm"}, stdinGrace + termGrace, stdinGrace + termGrace + slack, "ignored SIGTERM"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t, 60*time.Second)
			cfg := writeConfig(t, map[string]server{
				"notes":    notesServer(),
				"stubborn": chaosServer(append([]string{"-mode", "ok", "-max-life", "30s"}, tc.args...)...),
			}, nil)
			c := startRawTrunk(t, ctx, cfg)
			res := c.result(ctx, "tools/call", map[string]any{"name": "mcp__stubborn__ping_tool"})
			if !strings.Contains(string(res), "pong") {
				t.Fatalf("mcp__stubborn__ping_tool: %s", res)
			}
			if n := len(procsOf(c.tag, chaosBin)); n != 1 {
				t.Fatalf("want the stubborn server running, found %d", n)
			}
			start := time.Now()
			c.closeStdin()
			if !c.waitExit(tc.max + 5*time.Second) {
				t.Fatalf("mcptrunk did not exit\nstderr:\n%s", tail(c.stderr.String(), 3000))
			}
			took := time.Since(start)
			if took < tc.min-200*time.Millisecond || took > tc.max {
				t.Errorf("shutdown took %s, want between %s and %s\nstderr:\n%s", took, tc.min, tc.max, tail(c.stderr.String(), 3000))
			}
			if err := c.exitErr(); err != nil {
				t.Errorf("mcptrunk ended with %v, want a clean exit\nstderr:\n%s", err, tail(c.stderr.String(), 3000))
			}
			if left := processes(tagged(c.tag)); len(left) > 0 {
				t.Errorf("still running after mcptrunk exited: %v", left)
			}
			if tc.log != "" && !strings.Contains(c.stderr.String(), tc.log) {
				t.Errorf("the log does not say %q:\n%s", tc.log, tail(c.stderr.String(), 3000))
			}
			t.Logf("%s: mcptrunk exited %s after stdin EOF", tc.name, roundMS(took))
		})
	}
}
