//go:build !windows

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestHotReload100: a hundred config reloads in a row, adding, changing and
// removing a second server in turn (each edit followed by SIGHUP, then
// waited for), while two callers keep calling a stable server. No call to
// the stable server fails and its process is never restarted. Edits that do
// not parse or do not validate are rejected with a log line naming the
// problem, and the running set stays as it was. At the end no process is
// left but those of the final config, and after shutdown none at all.
func TestHotReload100(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 80*time.Second)
	dir := t.TempDir()
	path := filepath.Join(dir, "mcptrunk.json")
	write := func(data []byte) {
		t.Helper()
		// Replace the file whole, as editors do: the watcher never reads
		// half a config.
		tmp := filepath.Join(dir, ".mcptrunk.json.tmp")
		if err := os.WriteFile(tmp, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	config := func(extra server) []byte {
		servers := map[string]server{"stable": notesServer()}
		if extra != nil {
			servers["extra"] = extra
		}
		data, err := json.Marshal(map[string]any{"mcpServers": servers})
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	// The second server, in two versions that differ only in an argument.
	extra := func(version int) server {
		return chaosServer("-mode", "ok", "-max-life", fmt.Sprintf("%ds", 60+version))
	}

	write(config(nil))
	h := trunkHost(t, ctx, path, faultHost, "")
	st, _, err := h.waitStatus(ctx, 10*time.Second, func(st map[string]serverStatus) bool { return st["stable"].State == "ready" })
	if err != nil {
		t.Fatal(err)
	}
	stableSince := st["stable"].Since
	stableProcs := procsOf(h.tag, notesBin)
	if len(stableProcs) != 1 {
		t.Fatalf("want one stable server process, found %v", stableProcs)
	}
	stablePID := stableProcs[0].pid
	checkStable := func(when string) {
		t.Helper()
		procs := procsOf(h.tag, notesBin)
		if len(procs) != 1 || procs[0].pid != stablePID {
			t.Fatalf("%s: the stable server's process is %v, want pid %d alone", when, procs, stablePID)
		}
	}
	if names, err := h.toolNames(ctx); err != nil {
		t.Fatal(err)
	} else if len(names) == 0 {
		t.Fatal("no tools listed")
	}

	// The first edit is picked up by the file watcher alone: it proves the
	// watcher runs (and so that SIGHUP is caught from here on).
	write(config(extra(1)))
	if _, _, err := h.waitStatus(ctx, 10*time.Second, func(st map[string]serverStatus) bool { return st["extra"].State == "ready" }); err != nil {
		t.Fatalf("the file watcher did not add the server: %v\nstderr:\n%s", err, tail(h.stderr.String(), 3000))
	}
	write(config(nil))
	if _, _, err := h.waitStatus(ctx, 10*time.Second, func(st map[string]serverStatus) bool { _, ok := st["extra"]; return !ok }); err != nil {
		t.Fatalf("the file watcher did not remove the server: %v", err)
	}

	var loads []*callLoad
	for range 2 {
		loads = append(loads, echoLoad(h, ctx, "stable", time.Millisecond))
	}
	hup := func() {
		t.Helper()
		if err := h.cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatalf("SIGHUP: %v", err)
		}
	}

	// An edit that is not JSON, and one that is but is invalid as a whole:
	// each is rejected with a log line saying why, and nothing changes.
	rejected := 0
	reject := func(data []byte, want ...string) {
		t.Helper()
		before, err := h.status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		write(data)
		hup()
		rejected++
		want = append([]string{"config change rejected"}, want...)
		line, err := waitStderrLine(ctx, h.stderr, 5*time.Second, want...)
		if err != nil {
			t.Fatalf("an invalid edit: %v\nstderr:\n%s", err, tail(h.stderr.String(), 3000))
		}
		t.Logf("rejected: %s", line)
		// The watcher logs the rejection and returns: it handles one change
		// at a time, and a reload of this one would have come before.
		after, err := h.status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(after) != len(before) {
			t.Errorf("an invalid edit changed the servers: %v -> %v", before, after)
		}
		for name, b := range before {
			if a, ok := after[name]; !ok || a.Since != b.Since || a.State != b.State {
				t.Errorf("an invalid edit changed server %s: %+v -> %+v", name, b, a)
			}
		}
		checkStable("after an invalid edit")
	}

	const reloads = 100
	var (
		total, slowest time.Duration
		extraSince     time.Time
	)
	start := time.Now()
	for i := range reloads {
		var (
			data []byte
			done func(map[string]serverStatus) bool
		)
		switch i % 3 {
		case 0: // add
			data = config(extra(1))
			done = func(st map[string]serverStatus) bool { return st["extra"].State == "ready" }
		case 1: // change: the server is restarted with its new spec
			data = config(extra(2))
			prev := extraSince
			done = func(st map[string]serverStatus) bool {
				return st["extra"].State == "ready" && !st["extra"].Since.Equal(prev)
			}
		case 2: // remove
			data = config(nil)
			done = func(st map[string]serverStatus) bool { _, ok := st["extra"]; return !ok }
		}
		began := time.Now()
		write(data)
		hup()
		st, _, err := h.waitStatus(ctx, 10*time.Second, done)
		if err != nil {
			t.Fatalf("reload %d was not applied: %v\nstderr:\n%s", i, err, tail(h.stderr.String(), 3000))
		}
		took := time.Since(began)
		total += took
		slowest = max(slowest, took)
		extraSince = st["extra"].Since
		if s := st["stable"]; s.State != "ready" || s.Restarts != 0 || !s.Since.Equal(stableSince) {
			t.Fatalf("reload %d disturbed the stable server: %+v", i, s)
		}
		if i%10 == 9 {
			checkStable(fmt.Sprintf("after reload %d", i))
		}
		if i == reloads/2 {
			reject([]byte(`{"mcpServers": {"stable": `), "mcptrunk.json")
			// Invalid as a whole: a bad trunk option (a bad server entry
			// would fail only that server).
			badTrunk, err := json.Marshal(map[string]any{"mcpServers": map[string]server{"stable": notesServer()}, "trunk": map[string]any{"concurrency": -1}})
			if err != nil {
				t.Fatal(err)
			}
			reject(badTrunk, "trunk.concurrency: must be >= 1")
		}
	}
	elapsed := time.Since(start)

	calls := 0
	for i, l := range loads {
		calls += l.finish(t, fmt.Sprintf("caller %d", i))
	}
	if calls < reloads {
		t.Errorf("only %d calls to the stable server during %d reloads", calls, reloads)
	}
	checkStable("at the end")
	st, err = h.status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s := st["stable"]; s.State != "ready" || s.Restarts != 0 || !s.Since.Equal(stableSince) {
		t.Errorf("the stable server at the end: %+v, want ready since %s and never restarted", s, stableSince)
	}
	// 100 reloads end on an add (99 % 3 == 0): the extra server runs, once.
	if n := len(procsOf(h.tag, chaosBin)); n != 1 {
		t.Errorf("%d extra server processes running at the end, want 1: %v", n, procsOf(h.tag, chaosBin))
	}
	if n := len(processes(tagged(h.tag))); n != 3 {
		t.Errorf("%d processes at the end, want 3 (trunk, stable, extra): %v", n, processes(tagged(h.tag)))
	}
	if !h.alive() {
		t.Fatal("mcptrunk exited")
	}
	t.Logf("%d reloads (+%d rejected) in %s: mean %s, slowest %s from edit to applied; %d calls to the stable server, none failed",
		reloads, rejected, roundMS(elapsed), roundMS(total/reloads), roundMS(slowest), calls)
}
