//go:build !windows

package main

// The fault suite (faults_*_test.go): one upstream misbehaves in every way
// mcptrunk-chaos knows, next to a healthy notes server, under `mcptrunk
// serve` with the go-sdk as the host. For each fault the trunk stays up, the
// notes server keeps answering all along, the host gets an error naming the
// faulty server, and once the fault stops the server comes back by itself:
// its tools are listed again, a tools/list_changed told the host, and
// mcp__trunk__status shows it ready after at least one restart. The time
// from the fault to the host's error and to the recovery is logged.
//
// This file: the faults that take the server down, and its recovery.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// recoveryFault is one fault, and how to cause it.
type recoveryFault struct {
	name string
	// spec is the faulty server's entry; state is a fresh start counter.
	spec func(state string) server
	// trigger is the faulty server's tool whose call causes the fault; ""
	// when the fault is there from the trunk's start.
	trigger string
	// reasons: what the errors the host sees (or the server's status error)
	// say about the fault, one of them at least.
	reasons []string
}

// chaosWithState is a chaos server counting its starts in state, with
// these timeouts (nil: the defaults) and args. A call to it waits for its
// restarts 1 ms at most (timeouts.restart), so that each call during the
// fault fails naming why (TestFaultCrashUnderLoad has calls wait).
func chaosWithState(state string, timeouts map[string]any, args ...string) server {
	s := server{"command": chaosBin, "args": append(args, "-state-file", state, "-max-life", "30s")}
	t := map[string]any{"restart": "1ms"}
	for k, v := range timeouts {
		t[k] = v
	}
	s["timeouts"] = t
	return s
}

// connectIn2s gives a server 2 s to connect, so a hanging start fails fast.
var connectIn2s = map[string]any{"connect": "2s"}

var recoveryFaults = []recoveryFault{
	{
		name:    "crash-mid-call",
		spec:    func(st string) server { return chaosWithState(st, nil, "-mode", "crash-on-call", "-crash-first", "1") },
		trigger: "ping_tool",
		reasons: []string{"exit status 3", "crashing during tools/call"},
	},
	{
		// It dies in a call, then fails its next two starts (exits at
		// once), then starts.
		name:    "crash-on-start",
		spec:    func(st string) server { return chaosWithState(st, nil, "-mode", "exit", "-faulty-starts", "1-2") },
		trigger: "crash",
		reasons: []string{"exiting on purpose"},
	},
	{
		name: "hang-in-initialize",
		spec: func(st string) server {
			return chaosWithState(st, connectIn2s, "-mode", "hang-init", "-faulty-starts", "1")
		},
		trigger: "crash",
		reasons: []string{"timeouts.connect"},
	},
	{
		name: "garbage-instead-of-json",
		spec: func(st string) server {
			return chaosWithState(st, connectIn2s, "-mode", "garbage", "-faulty-starts", "1")
		},
		trigger: "crash",
		reasons: []string{"timeouts.connect", "not JSON"},
	},
	{
		// Broken from the trunk's start: exits on its first three starts.
		name:    "exit-at-trunk-start",
		spec:    func(st string) server { return chaosWithState(st, nil, "-mode", "exit", "-crash-first", "3") },
		reasons: []string{"exiting on purpose"},
	},
	{
		// Hangs in its first two starts: the fault outlasts the first
		// error by a start (2s) rather than by the first restart's backoff
		// (250 ms), which a loaded machine can spend before the host has
		// listed the tools and made its first call to the healthy server
		// (the check that it answered during the fault then found none).
		name: "hang-in-initialize-at-trunk-start",
		spec: func(st string) server {
			return chaosWithState(st, connectIn2s, "-mode", "hang-init", "-crash-first", "2")
		},
		reasons: []string{"timeouts.connect"},
	},
}

// TestFaultRecovery: each fault in recoveryFaults, caused while a
// healthy server is being called, then cured.
func TestFaultRecovery(t *testing.T) {
	t.Parallel()
	for _, f := range recoveryFaults {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			runRecovery(t, f)
		})
	}
}

// runRecovery causes f under a trunk and checks that the trunk recovers.
func runRecovery(t *testing.T, f recoveryFault) {
	ctx := testCtx(t, 60*time.Second)
	cfg := writeConfig(t, map[string]server{"notes": notesServer(), "flaky": f.spec(chaosStateFile(t))}, nil)
	const ping = "mcp__flaky__ping_tool"

	var (
		h     *host
		fault time.Time // when the fault happened
		errAt time.Time // when the host had its first error
		errs  []string  // distinct errors the host saw for the faulty server
	)
	noteErr := func(err error) {
		if !slices.Contains(errs, err.Error()) {
			errs = append(errs, err.Error())
		}
	}

	if f.trigger == "" {
		// The fault is there from the start: the host's first call to the
		// server fails.
		fault = time.Now()
		h = trunkHost(t, ctx, cfg, faultHost, "")
		_, err := h.callTool(ctx, ping, nil)
		if err == nil {
			t.Fatalf("%s answered although its server is broken from the start", ping)
		}
		errAt = time.Now()
		noteErr(err)
		if !namesServer(err, "flaky", ping) {
			t.Errorf("the error does not name the server: %v", err)
		}
	} else {
		h = trunkHost(t, ctx, cfg, faultHost, "")
		if st, _, err := h.waitStatus(ctx, 10*time.Second, func(st map[string]serverStatus) bool {
			return st["flaky"].State == "ready" && st["notes"].State == "ready"
		}); err != nil {
			t.Fatalf("the servers did not get ready: %v\nstderr:\n%s", err, tail(h.stderr.String(), 3000))
		} else if st["flaky"].Restarts != 0 {
			t.Fatalf("flaky restarted before the fault: %+v", st["flaky"])
		}
	}

	// The host lists the tools (so that it is told when they change), and the
	// healthy server is called all along from here.
	names, err := h.toolNames(ctx)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	if !slices.Contains(names, "mcp__notes__echo") {
		t.Fatalf("mcp__notes__echo is not listed: %q", names)
	}
	listedAt := time.Now()
	load := echoLoad(h, ctx, "notes", 5*time.Millisecond)

	if f.trigger != "" {
		if !slices.Contains(names, "mcp__flaky__"+f.trigger) {
			t.Fatalf("mcp__flaky__%s is not listed: %q", f.trigger, names)
		}
		if err := load.waitOKAfter(ctx, time.Now(), 5*time.Second); err != nil {
			t.Fatalf("before the fault: %v", err)
		}
		trigger := "mcp__flaky__" + f.trigger
		fault = time.Now()
		_, err := h.callTool(ctx, trigger, nil)
		errAt = time.Now()
		if err == nil {
			t.Fatalf("%s answered although it crashes the server", trigger)
		}
		noteErr(err)
		if !namesServer(err, "flaky", trigger) {
			t.Errorf("the error of %s does not name the server: %v", trigger, err)
		}
	}
	// The host was told of the tools going and coming back: withdrawn then
	// back for a fault in a running server; back for one broken from the
	// start, unless it was already back when the host listed.
	want := 2
	if f.trigger == "" {
		want = 1
		if slices.Contains(names, ping) {
			t.Logf("the server was back before the host listed the tools")
			want = 0
		}
	}

	// While the server is away, its calls fail naming it; poll until
	// mcp__trunk__status says it is back.
	var statusErrs []string
	st, readyAt, err := h.waitStatus(ctx, 20*time.Second, func(st map[string]serverStatus) bool {
		s := st["flaky"]
		if s.Error != "" && !slices.Contains(statusErrs, s.Error) {
			statusErrs = append(statusErrs, s.Error)
		}
		if s.State == "ready" && s.Restarts >= 1 {
			return true
		}
		if _, err := h.callTool(ctx, ping, nil); err != nil {
			noteErr(err)
			if !namesServer(err, "flaky", ping) {
				t.Errorf("an error while the server is away does not name it: %v", err)
			}
		}
		return false
	})
	if err != nil {
		t.Fatalf("the faulty server did not recover: %v\nstderr:\n%s", err, tail(h.stderr.String(), 4000))
	}
	flaky := st["flaky"]

	// Its tools come back, announced by a list_changed.
	announced := listedAt
	if f.trigger != "" {
		announced = fault
	}
	waitCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := eventually(waitCtx, 10*time.Millisecond, func() error {
		if n := h.rec.toolsChangedSince(announced); n < want {
			return fmt.Errorf("%d tools/list_changed since the fault, want at least %d", n, want)
		}
		return nil
	}); err != nil {
		t.Error(err)
	}
	names, err = h.toolNames(ctx)
	if err != nil {
		t.Fatalf("tools/list after the recovery: %v", err)
	}
	for _, want := range []string{ping, "mcp__flaky__hang", "mcp__notes__echo"} {
		if !slices.Contains(names, want) {
			t.Errorf("%s is not listed after the recovery: %q", want, names)
		}
	}
	if text, err := h.callTool(ctx, ping, nil); err != nil || text != "pong" {
		t.Errorf("%s after the recovery: %q, %v", ping, text, err)
	}
	recovered := time.Now()

	// The healthy server answered during the fault, and never failed.
	if err := load.waitOKAfter(ctx, recovered, 5*time.Second); err != nil {
		t.Errorf("after the recovery: %v", err)
	}
	during := load.okWithin(fault, readyAt)
	calls := load.finish(t, f.name)
	if during == 0 {
		t.Errorf("no call to the healthy server completed while the fault lasted (%s)", readyAt.Sub(fault))
	}
	if !h.alive() {
		t.Fatalf("mcptrunk exited\nstderr:\n%s", tail(h.stderr.String(), 3000))
	}

	all := strings.Join(append(append([]string{}, errs...), statusErrs...), "\n")
	if !containsAny(all, f.reasons) {
		t.Errorf("neither the host's errors nor the status say why (want one of %q):\n%s", f.reasons, all)
	}
	if line := logLineNaming(h.stderr.String(), "flaky"); line == "" {
		t.Errorf("the trunk's log has no error naming the faulty server:\n%s", tail(h.stderr.String(), 3000))
	}
	t.Logf("%s: fault -> error at the host %s; fault -> ready again %s (restarts %d); %d notes calls, %d during the fault",
		f.name, roundMS(errAt.Sub(fault)), roundMS(readyAt.Sub(fault)), flaky.Restarts, calls, during)
	for _, e := range errs {
		t.Logf("  host error: %s", e)
	}
	for _, e := range statusErrs {
		t.Logf("  status error: %s", e)
	}
}
