//go:build !windows

package main

// The fault suite (see faults_recovery_test.go): a tool that never answers.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestHangingTool: a tool that never answers is ended by the host's
// cancellation or by timeouts.call; the cancellation reaches the upstream,
// the error arrives in time, and the server stays up.
func TestHangingTool(t *testing.T) {
	t.Parallel()
	const hang = "mcp__flaky__hang"
	setup := func(t *testing.T, timeouts map[string]any) (context.Context, *host, *callLoad) {
		ctx := testCtx(t, 60*time.Second)
		flaky := server{"command": chaosBin, "args": []string{"-mode", "ok"}}
		if timeouts != nil {
			flaky["timeouts"] = timeouts
		}
		cfg := writeConfig(t, map[string]server{"notes": notesServer(), "flaky": flaky}, nil)
		h := trunkHost(t, ctx, cfg, faultHost, "")
		if _, _, err := h.waitStatus(ctx, 10*time.Second, func(st map[string]serverStatus) bool {
			return st["flaky"].State == "ready" && st["notes"].State == "ready"
		}); err != nil {
			t.Fatalf("the servers did not get ready: %v", err)
		}
		return ctx, h, echoLoad(h, ctx, "notes", 5*time.Millisecond)
	}
	after := func(t *testing.T, ctx context.Context, h *host, load *callLoad, from time.Time, cancelled int) {
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
		if text, err := h.callTool(ctx, "mcp__flaky__ping_tool", nil); err != nil || text != "pong" {
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
		_, err := h.callTool(callCtx, hang, nil)
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
		line, werr := waitStderrLine(ctx, h.stderr, 5*time.Second, "flaky", "hang cancelled")
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
			cancelAfter, roundMS(end.Sub(cancelledAt)), err, line)
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
				_, errs[i] = h.callTool(ctx, hang, nil)
				took[i] = time.Since(began)
			})
		}
		wg.Wait()
		for i := range n {
			switch {
			case errs[i] == nil:
				t.Errorf("call %d: the hanging tool answered", i)
			case !namesServer(errs[i], "flaky", hang) || !strings.Contains(errs[i].Error(), "timed out"):
				t.Errorf("call %d: the error does not say that server flaky timed out: %v", i, errs[i])
			}
			if took[i] < timeout || took[i] > timeout+1500*time.Millisecond {
				t.Errorf("call %d: the error came after %s, want just after timeouts.call (%s)", i, took[i], timeout)
			}
			t.Logf("call %d: error after %s: %v", i, roundMS(took[i]), errs[i])
		}
		after(t, ctx, h, load, start, n)
	})
}
