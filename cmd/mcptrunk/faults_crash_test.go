//go:build !windows

package main

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFaultCrashUnderLoad: kill -9 of a server while four callers keep
// calling it. Only the calls in flight at the crash fail: at most one per
// caller, which has one call in flight at a time (a call sent just after
// the signal, before the process is gone, is one too), each saying the
// server crashed. Every call made while the server restarts waits for it
// and is served once it is back.
func TestFaultCrashUnderLoad(t *testing.T) {
	t.Parallel()
	const callers = 4
	ctx := testCtx(t, 60*time.Second)
	cfg := writeConfig(t, map[string]server{"notes": notesServer()}, nil)
	h := trunkHost(t, ctx, cfg, faultHost, "")
	if _, _, err := h.waitStatus(ctx, 10*time.Second, func(st map[string]serverStatus) bool { return st["notes"].State == "ready" }); err != nil {
		t.Fatalf("notes did not get ready: %v", err)
	}
	loads := make([]*callLoad, callers)
	for i := range loads {
		loads[i] = echoLoad(h, ctx, "notes", 0)
	}
	stop := func() {
		for _, l := range loads {
			select {
			case <-l.stop:
			default:
				close(l.stop)
			}
			<-l.done
		}
	}
	defer stop()
	for _, l := range loads {
		if err := l.waitOKAfter(ctx, time.Now(), 10*time.Second); err != nil {
			t.Fatalf("before the crash: %v", err)
		}
	}
	procs := procsOf(h.tag, notesBin)
	if len(procs) != 1 {
		t.Fatalf("want one notes process, found %v", procs)
	}
	killed := time.Now()
	if err := syscall.Kill(procs[0].pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_, readyAt, err := h.waitStatus(ctx, 20*time.Second, func(st map[string]serverStatus) bool {
		return st["notes"].State == "ready" && st["notes"].Restarts >= 1
	})
	if err != nil {
		t.Fatalf("notes did not come back: %v\nstderr:\n%s", err, tail(h.stderr.String(), 3000))
	}
	for _, l := range loads {
		if err := l.waitOKAfter(ctx, readyAt, 10*time.Second); err != nil {
			t.Fatalf("after the restart: %v", err)
		}
	}
	stop()

	var calls, failed, during int
	for i, l := range loads {
		mine := 0
		l.mu.Lock()
		for _, c := range l.calls {
			calls++
			if c.end.After(killed) && c.start.Before(readyAt) {
				during++
			}
			if c.err == nil {
				continue
			}
			failed++
			if mine++; mine > 1 {
				t.Errorf("caller %d: a call made %s after the kill failed too: %v", i, c.start.Sub(killed), c.err)
			}
			if !strings.Contains(c.err.Error(), `server "notes" crashed`) {
				t.Errorf("a failed call does not say the server crashed: %v", c.err)
			}
		}
		l.mu.Unlock()
	}
	if failed > callers {
		t.Errorf("%d calls failed; at most %d were in flight at the crash", failed, callers)
	}
	t.Logf("kill -9 under %d callers: %d calls, %d failed (in flight at the crash), %d spanned the restart; ready again %s after the kill",
		callers, calls, failed, during, roundMS(readyAt.Sub(killed)))
}
