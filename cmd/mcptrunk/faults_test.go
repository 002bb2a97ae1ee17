//go:build !windows

package main

// The fault suite: one upstream misbehaves in every way mcptrunk-chaos
// knows, next to a healthy notes server, under `mcptrunk serve` with the
// go-sdk as the host. For each fault the trunk stays up, the notes server
// keeps answering all along, the host gets an error naming the faulty
// server, and once the fault stops the server comes back by itself: its
// tools are listed again, a tools/list_changed told the host, and
// mcp__trunk__status shows it ready after at least one restart. The time
// from the fault to the host's error and to the recovery is logged.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fltFault is one fault, and how to cause it.
type fltFault struct {
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

func fltChaos(state string, timeouts map[string]any, args ...string) server {
	s := server{"command": chaosBin, "args": append(args, "-state-file", state, "-max-life", "30s")}
	if timeouts != nil {
		s["timeouts"] = timeouts
	}
	return s
}

var fltConnect2s = map[string]any{"connect": "2s"}

var fltRecoveryFaults = []fltFault{
	{
		name:    "crash-mid-call",
		spec:    func(st string) server { return fltChaos(st, nil, "-mode", "crash-on-call", "-crash-first", "1") },
		trigger: "ping_tool",
		reasons: []string{"exit status 3", "crashing during tools/call"},
	},
	{
		// It dies in a call, then fails its next two starts (exits at
		// once), then starts.
		name:    "crash-on-start",
		spec:    func(st string) server { return fltChaos(st, nil, "-mode", "exit", "-faulty-starts", "1-2") },
		trigger: "crash",
		reasons: []string{"exiting on purpose"},
	},
	{
		name:    "hang-in-initialize",
		spec:    func(st string) server { return fltChaos(st, fltConnect2s, "-mode", "hang-init", "-faulty-starts", "1") },
		trigger: "crash",
		reasons: []string{"timeouts.connect"},
	},
	{
		name:    "garbage-instead-of-json",
		spec:    func(st string) server { return fltChaos(st, fltConnect2s, "-mode", "garbage", "-faulty-starts", "1") },
		trigger: "crash",
		reasons: []string{"timeouts.connect", "not JSON"},
	},
	{
		// Broken from the trunk's start: exits on its first three starts.
		name:    "exit-at-trunk-start",
		spec:    func(st string) server { return fltChaos(st, nil, "-mode", "exit", "-crash-first", "3") },
		reasons: []string{"exiting on purpose"},
	},
	{
		name:    "hang-in-initialize-at-trunk-start",
		spec:    func(st string) server { return fltChaos(st, fltConnect2s, "-mode", "hang-init", "-crash-first", "1") },
		reasons: []string{"timeouts.connect"},
	},
}

// TestFaultRecovery: each fault in fltRecoveryFaults, caused while a
// healthy server is being called, then cured.
func TestFaultRecovery(t *testing.T) {
	t.Parallel()
	for _, f := range fltRecoveryFaults {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			fltRunRecovery(t, f)
		})
	}
}

func fltRunRecovery(t *testing.T, f fltFault) {
	ctx := testCtx(t, 60*time.Second)
	cfg := writeConfig(t, map[string]server{"notes": notesServer(), "flaky": f.spec(fltStateFile(t))}, nil)
	const ping = "mcp__flaky__ping_tool"

	var (
		h     *fltHost
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
		h = fltStartHost(t, ctx, cfg)
		_, err := h.call(ctx, ping, nil)
		if err == nil {
			t.Fatalf("%s answered although its server is broken from the start", ping)
		}
		errAt = time.Now()
		noteErr(err)
		if !fltNamesServer(err, "flaky", ping) {
			t.Errorf("the error does not name the server: %v", err)
		}
	} else {
		h = fltStartHost(t, ctx, cfg)
		if st, _, err := h.waitStatus(ctx, 10*time.Second, func(st map[string]fltStatus) bool {
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
	load := fltEchoLoad(h, ctx, "notes", 5*time.Millisecond)

	if f.trigger != "" {
		if !slices.Contains(names, "mcp__flaky__"+f.trigger) {
			t.Fatalf("mcp__flaky__%s is not listed: %q", f.trigger, names)
		}
		if err := load.waitOKAfter(ctx, time.Now(), 5*time.Second); err != nil {
			t.Fatalf("before the fault: %v", err)
		}
		trigger := "mcp__flaky__" + f.trigger
		fault = time.Now()
		_, err := h.call(ctx, trigger, nil)
		errAt = time.Now()
		if err == nil {
			t.Fatalf("%s answered although it crashes the server", trigger)
		}
		noteErr(err)
		if !fltNamesServer(err, "flaky", trigger) {
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
	st, readyAt, err := h.waitStatus(ctx, 20*time.Second, func(st map[string]fltStatus) bool {
		s := st["flaky"]
		if s.Error != "" && !slices.Contains(statusErrs, s.Error) {
			statusErrs = append(statusErrs, s.Error)
		}
		if s.State == "ready" && s.Restarts >= 1 {
			return true
		}
		if _, err := h.call(ctx, ping, nil); err != nil {
			noteErr(err)
			if !fltNamesServer(err, "flaky", ping) {
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
		if n := h.listChangedSince(announced); n < want {
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
	if text, err := h.call(ctx, ping, nil); err != nil || text != "pong" {
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
		f.name, fltRound(errAt.Sub(fault)), fltRound(readyAt.Sub(fault)), flaky.Restarts, calls, during)
	for _, e := range errs {
		t.Logf("  host error: %s", e)
	}
	for _, e := range statusErrs {
		t.Logf("  status error: %s", e)
	}
}

// fltNoiseFaults misbehave without taking the server down: the trunk must
// neither fail the server nor restart it, and its answers must arrive whole.
var fltNoiseFaults = []struct {
	name  string
	args  []string
	check func(t *testing.T, ctx context.Context, h *fltHost) time.Duration // the fault; returns how long it took
}{
	{"invalid-json-mid-session", []string{"-mode", "ok"}, func(t *testing.T, ctx context.Context, h *fltHost) time.Duration {
		start := time.Now()
		text, err := h.call(ctx, "mcp__flaky__garbage_then_ok", map[string]any{"lines": 50})
		took := time.Since(start)
		if err != nil || text != "ok after 50 junk lines" {
			t.Errorf("garbage_then_ok: %q, %v", text, err)
		}
		if line, err := fltWaitStderr(ctx, h.stderr, 5*time.Second, "flaky", "not JSON-RPC"); err != nil {
			t.Errorf("the trunk did not log the junk naming the server: %v", err)
		} else {
			t.Logf("log: %s", line)
		}
		return took
	}},
	{"notification-flood", []string{"-mode", "ok"}, func(t *testing.T, ctx context.Context, h *fltHost) time.Duration {
		const count = 5000
		start := time.Now()
		text, err := h.call(ctx, "mcp__flaky__notify_flood", map[string]any{"count": count})
		if err != nil || text != fmt.Sprintf("sent %d notifications", count) {
			t.Errorf("notify_flood: %q, %v", text, err)
		}
		waitCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := eventually(waitCtx, 10*time.Millisecond, func() error {
			if n := h.logCount("flaky/flood"); n < count {
				return fmt.Errorf("the host got %d of the %d notifications/message (logger flaky/flood)", n, count)
			}
			return nil
		}); err != nil {
			t.Error(err)
		}
		return time.Since(start)
	}},
	{"stderr-flood", []string{"-mode", "stderr-flood"}, func(t *testing.T, ctx context.Context, h *fltHost) time.Duration {
		start := time.Now()
		for i := range 20 {
			if text, err := h.call(ctx, "mcp__flaky__ping_tool", nil); err != nil || text != "pong" {
				t.Errorf("ping_tool %d during a stderr flood: %q, %v", i, text, err)
			}
			time.Sleep(10 * time.Millisecond)
		}
		if _, err := fltWaitStderr(ctx, h.stderr, 5*time.Second, "flaky", "stderr flood"); err != nil {
			t.Errorf("the flood is not in the trunk's log with the server's name: %v", err)
		}
		return time.Since(start)
	}},
}

// TestFaultNoise: invalid JSON in the middle of a session, a 20 MB result
// on one line, a flood of notifications and a flood of stderr neither take
// the trunk down nor disturb the healthy server, and the faulty server
// keeps working without a restart.
func TestFaultNoise(t *testing.T) {
	t.Parallel()
	for _, f := range fltNoiseFaults {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t, 60*time.Second)
			cfg := writeConfig(t, map[string]server{
				"notes": notesServer(),
				"flaky": {"command": chaosBin, "args": append(f.args, "-max-life", "30s")},
			}, nil)
			h := fltStartHost(t, ctx, cfg)
			if _, _, err := h.waitStatus(ctx, 10*time.Second, func(st map[string]fltStatus) bool {
				return st["flaky"].State == "ready" && st["notes"].State == "ready"
			}); err != nil {
				t.Fatalf("the servers did not get ready: %v", err)
			}
			load := fltEchoLoad(h, ctx, "notes", 5*time.Millisecond)
			start := time.Now()
			took := f.check(t, ctx, h)
			end := time.Now()
			if err := load.waitOKAfter(ctx, end, 5*time.Second); err != nil {
				t.Errorf("after the fault: %v", err)
			}
			during := load.okWithin(start, end)
			slowest := load.slowest(start, end)
			calls := load.finish(t, f.name)
			if !h.alive() {
				t.Fatalf("mcptrunk exited\nstderr:\n%s", tail(h.stderr.String(), 3000))
			}
			st, err := h.status(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if s := st["flaky"]; s.State != "ready" || s.Restarts != 0 {
				t.Errorf("the faulty server after the fault: %+v, want ready and never restarted", s)
			}
			if text, err := h.call(ctx, "mcp__flaky__ping_tool", nil); err != nil || text != "pong" {
				t.Errorf("ping_tool after the fault: %q, %v", text, err)
			}
			t.Logf("%s: the fault took %s at the host; %d notes calls, %d completed during it, the slowest in %s",
				f.name, fltRound(took), calls, during, fltRound(slowest))
			if during == 0 && took > 200*time.Millisecond {
				t.Errorf("no call to the healthy server completed during the %s fault", took)
			}
		})
	}
}

// TestFaultHugeResult: a 20 MB result on one line comes through whole,
// while the healthy server keeps answering. The host here reads lines
// without decoding them: the go-sdk accepts the frame too (given a
// MaxLineLength over its 16 MiB default), but decoding it takes the
// race-enabled SDK some 15 s, which would time the test's host rather than
// the trunk.
func TestFaultHugeResult(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 60*time.Second)
	cfg := writeConfig(t, map[string]server{
		"notes": notesServer(),
		"flaky": chaosServer("-mode", "ok", "-max-life", "30s"),
	}, map[string]any{"maxResultBytes": 64 << 20}) // this host reads any size
	c := fltStartLineConn(t, ctx, cfg)
	if text, err := c.callTool(ctx, "mcp__flaky__ping_tool", nil); err != nil || text != "pong" {
		t.Fatalf("mcp__flaky__ping_tool: %q, %v\nstderr:\n%s", text, err, tail(c.stderr.String(), 3000))
	}
	load := fltLineEchoLoad(c, ctx, "notes", 5*time.Millisecond)
	if err := load.waitOKAfter(ctx, time.Now(), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	const size = 20 << 20
	start := time.Now()
	line, err := c.call(ctx, "tools/call", `{"name":"mcp__flaky__huge","arguments":{"bytes":`+strconv.Itoa(size)+`}}`)
	end := time.Now()
	if err != nil {
		t.Fatalf("huge: %v\nstderr:\n%s", err, tail(c.stderr.String(), 3000))
	}
	want := `"result":{"content":[{"type":"text","text":"` + fltHugeText(size) + `"}]}}` + "\n"
	if !bytes.HasSuffix(line, []byte(want)) || len(line) > len(want)+40 {
		t.Errorf("huge: got %d bytes (%q...%q), want the %d-byte text", len(line), line[:min(80, len(line))], line[max(0, len(line)-80):], size)
	}
	if err := load.waitOKAfter(ctx, end, 5*time.Second); err != nil {
		t.Errorf("after the huge result: %v", err)
	}
	during := load.okWithin(start, end)
	slowest := load.slowest(start, end)
	calls := load.finish(t, "20MB result")
	if during == 0 {
		t.Errorf("no call to the healthy server completed during the %s the huge call took", end.Sub(start))
	}
	text, err := c.callTool(ctx, "mcp__trunk__status", nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := fltParseStatus(text)
	if err != nil {
		t.Fatal(err)
	}
	if s := st["flaky"]; s.State != "ready" || s.Restarts != 0 {
		t.Errorf("the server after the huge result: %+v, want ready and never restarted", s)
	}
	t.Logf("20MB-result: the %d-byte line took %s from call to answer; %d notes calls, %d completed during it, the slowest in %s",
		len(line), fltRound(end.Sub(start)), calls, during, fltRound(slowest))
}

// TestFaultHugeResultDefaultHost: the same 20 MB result, to a host that
// reads with the go-sdk's CommandTransport (frames up to 16 MiB). Passed on,
// the frame would break the host's reader and with it the whole session,
// every server's. Under the default trunk.maxResultBytes the call gets a
// tool error naming the tool and the limit instead, and the session lives.
func TestFaultHugeResultDefaultHost(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 60*time.Second)
	cfg := writeConfig(t, map[string]server{
		"notes": notesServer(),
		"flaky": chaosServer("-mode", "ok", "-max-life", "30s"),
	}, nil)
	s := connectTrunk(t, ctx, cfg)
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__flaky__huge", Arguments: map[string]any{"bytes": 20 << 20}})
	if err != nil || !res.IsError || !strings.Contains(fltText(res), "mcp__flaky__huge") || !strings.Contains(fltText(res), "maxResultBytes") {
		t.Errorf("a result too large for the host: %v, %v; want a tool error naming the tool and trunk.maxResultBytes", res, err)
	}
	callCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	res, err = s.CallTool(callCtx, &mcp.CallToolParams{Name: "mcp__notes__echo", Arguments: map[string]any{"text": "still here"}})
	if err != nil || fltText(res) != "still here" {
		t.Errorf("the healthy server after the huge result: %v, %v", res, err)
	}
}

// fltHugeText is what the chaos server's huge tool answers (its hugeText).
func fltHugeText(n int) string {
	const pattern = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	return strings.Repeat(pattern, n/len(pattern)) + pattern[:n%len(pattern)]
}

// TestHangingTool: a tool that never answers is ended by the host's
// cancellation or by timeouts.call; the cancellation reaches the upstream,
// the error arrives in time, and the server stays up.
func TestHangingTool(t *testing.T) {
	t.Parallel()
	const hang = "mcp__flaky__hang"
	setup := func(t *testing.T, timeouts map[string]any) (context.Context, *fltHost, *fltLoad) {
		ctx := testCtx(t, 60*time.Second)
		flaky := server{"command": chaosBin, "args": []string{"-mode", "ok"}}
		if timeouts != nil {
			flaky["timeouts"] = timeouts
		}
		cfg := writeConfig(t, map[string]server{"notes": notesServer(), "flaky": flaky}, nil)
		h := fltStartHost(t, ctx, cfg)
		if _, _, err := h.waitStatus(ctx, 10*time.Second, func(st map[string]fltStatus) bool {
			return st["flaky"].State == "ready" && st["notes"].State == "ready"
		}); err != nil {
			t.Fatalf("the servers did not get ready: %v", err)
		}
		return ctx, h, fltEchoLoad(h, ctx, "notes", 5*time.Millisecond)
	}
	after := func(t *testing.T, ctx context.Context, h *fltHost, load *fltLoad, from time.Time, cancelled int) {
		// Every hanging call was cancelled upstream too.
		waitCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if err := eventually(waitCtx, 20*time.Millisecond, func() error {
			if n := strings.Count(h.stderr.String(), "chaos: hang cancelled"); n < cancelled {
				return fmt.Errorf("the upstream saw %d of %d cancellations", n, cancelled)
			}
			return nil
		}); err != nil {
			t.Errorf("%v\nstderr:\n%s", err, tail(h.stderr.String(), 3000))
		}
		if text, err := h.call(ctx, "mcp__flaky__ping_tool", nil); err != nil || text != "pong" {
			t.Errorf("ping_tool after the hang: %q, %v", text, err)
		}
		st, err := h.status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if s := st["flaky"]; s.State != "ready" || s.Restarts != 0 {
			t.Errorf("the server after the hang: %+v, want ready and never restarted", s)
		}
		during := load.okWithin(from, time.Now())
		load.finish(t, t.Name())
		if during == 0 {
			t.Error("no call to the healthy server completed while the tool hung")
		}
	}

	t.Run("host-cancels", func(t *testing.T) {
		t.Parallel()
		ctx, h, load := setup(t, nil)
		const cancelAfter = 500 * time.Millisecond
		callCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		start := time.Now()
		cancelled := make(chan time.Time, 1)
		timer := time.AfterFunc(cancelAfter, func() { cancelled <- time.Now(); cancel() })
		defer timer.Stop()
		_, err := h.call(callCtx, hang, nil)
		end := time.Now()
		took := end.Sub(start)
		if err == nil {
			t.Fatal("the hanging tool answered")
		}
		if !errors.Is(err, context.Canceled) && !strings.Contains(err.Error(), "cancel") {
			t.Errorf("the error is not the host's cancellation: %v", err)
		}
		if took < cancelAfter || took > cancelAfter+time.Second {
			t.Errorf("the call ended %s after it began, want just after the cancellation at %s", took, cancelAfter)
		}
		line, werr := fltWaitStderr(ctx, h.stderr, 5*time.Second, "flaky", "hang cancelled")
		if werr != nil {
			t.Errorf("the cancellation did not reach the upstream: %v", werr)
		}
		var cancelledAt time.Time
		select {
		case cancelledAt = <-cancelled:
		default:
			t.Fatal("the call ended before the host cancelled it")
		}
		t.Logf("host cancelled %s into the call; the call returned %s after the cancellation (%v); upstream: %s",
			cancelAfter, fltRound(end.Sub(cancelledAt)), err, line)
		after(t, ctx, h, load, start, 1)
	})

	t.Run("call-timeout", func(t *testing.T) {
		t.Parallel()
		const timeout = 500 * time.Millisecond
		ctx, h, load := setup(t, map[string]any{"call": "500ms"})
		const n = 3 // at once
		var wg sync.WaitGroup
		errs := make([]error, n)
		took := make([]time.Duration, n)
		start := time.Now()
		for i := range n {
			wg.Go(func() {
				began := time.Now()
				_, errs[i] = h.call(ctx, hang, nil)
				took[i] = time.Since(began)
			})
		}
		wg.Wait()
		for i := range n {
			switch {
			case errs[i] == nil:
				t.Errorf("call %d: the hanging tool answered", i)
			case !fltNamesServer(errs[i], "flaky", hang) || !strings.Contains(errs[i].Error(), "timed out"):
				t.Errorf("call %d: the error does not say that server flaky timed out: %v", i, errs[i])
			}
			if took[i] < timeout || took[i] > timeout+1500*time.Millisecond {
				t.Errorf("call %d: the error came after %s, want just after timeouts.call (%s)", i, took[i], timeout)
			}
			t.Logf("call %d: error after %s: %v", i, fltRound(took[i]), errs[i])
		}
		after(t, ctx, h, load, start, n)
	})
}

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
	t.Logf("SIGKILL: every upstream (%d) gone %s after mcptrunk was killed", len(ups), fltRound(took))
}

// TestShutdownEscalation: at shutdown each upstream gets its stdin closed,
// then SIGTERM after stdinGrace (2s), then SIGKILL after termGrace (2s). A
// server that takes its time, or ignores EOF, or ignores both, is gone
// within that ladder (+ slack), and mcptrunk exits cleanly with nothing
// left behind. A healthy server next to it exits at once meanwhile.
func TestShutdownEscalation(t *testing.T) {
	t.Parallel()
	const stdinGrace, termGrace = 2 * time.Second, 2 * time.Second
	const slack = 2 * time.Second
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
			if n := len(fltProcs(c.tag, chaosBin)); n != 1 {
				t.Fatalf("want the stubborn server running, found %d", n)
			}
			start := time.Now()
			c.closeStdin()
			if !c.waitExit(tc.max + 5*time.Second) {
				t.Fatalf("mcptrunk did not exit\nstderr:\n%s", tail(c.stderr.String(), 3000))
			}
			took := time.Since(start)
			if took < tc.min-200*time.Millisecond || took > tc.max {
				t.Errorf("shutdown took %s, want between %s and %s", took, tc.min, tc.max)
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
			t.Logf("%s: mcptrunk exited %s after stdin EOF", tc.name, fltRound(took))
		})
	}
}
