//go:build linux

package main

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// TestFaultHostReadsNothing: a stdio host asks for 400 answers of 1 MiB
// and reads none. The trunk starts a bounded number of the calls, stops
// reading the host once it holds its bound's worth of answers (and says so
// in its log), and when the host reads, all 400 answers arrive. What the
// trunk holds is read from its own collector's trace (GODEBUG=gctrace=1),
// not its RSS: the test builds the trunk with the race detector, whose
// shadow memory grows with every address the heap ever used, so a host
// that reads slowly took a race-built trunk's RSS to 470 MiB while its
// heap stayed under 130 MB.
func TestFaultHostReadsNothing(t *testing.T) {
	t.Parallel()
	const (
		n    = 400
		size = 1 << 20
	)
	// The test is about what the trunk holds, not how fast 400 MiB pass
	// through three race-built processes: on a starved machine (load 20,
	// collector pauses of seconds in the trunk's trace) 69 answers had
	// arrived after 120 s. So the whole has a generous bound, and the
	// answers fail only when none arrives for answerStall.
	const answerStall = time.Minute
	ctx := testCtx(t, 8*time.Minute)
	cfg := writeConfig(t, map[string]server{"notes": notesServer()}, nil)
	trunk := trunkCmd(newTag(t), "serve", "--config", cfg)
	trunk.Env = append(trunk.Env, "GODEBUG=gctrace=1")
	c := startRaw(t, "mcptrunk", trunk)
	c.initialize(ctx)
	if text, err := c.callTool(ctx, "mcp__notes__blob", map[string]any{"bytes": 10}); err != nil || text != "xxxxxxxxxx" {
		t.Fatalf("blob: %q, %v", text, err)
	}
	base := peakRSS(t, c.cmd.Process.Pid)

	c.hold()
	answers := make([]chan []byte, n)
	c.mu.Lock()
	for i := range answers {
		answers[i] = make(chan []byte, 1)
		c.pending[fmt.Sprint(1<<30+i)] = answers[i]
	}
	c.mu.Unlock()
	wrote := make(chan error, 1)
	go func() {
		for i := range n {
			line := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"mcp__notes__blob","arguments":{"bytes":%d}}}`+"\n", 1<<30+i, size)
			if err := c.write([]byte(line)); err != nil {
				wrote <- err
				return
			}
		}
		wrote <- nil
	}()
	if _, err := waitStderrLine(ctx, c.stderr, 3*time.Minute, "not reading its answers"); err != nil {
		t.Fatalf("the trunk did not stop reading a host that reads nothing: %v\nstderr:\n%s", err, tail(c.stderr.String(), 3000))
	}
	held := peakRSS(t, c.cmd.Process.Pid)
	c.resume()
	// arrived counts the answers in, from i on those not yet read (each
	// channel holds one): they come in any order.
	arrived := func(i int) int {
		for _, ch := range answers[i:] {
			i += len(ch)
		}
		return i
	}
	stall := time.NewTicker(answerStall)
	defer stall.Stop()
	before := 0
	for i := 0; i < n; {
		select {
		case line := <-answers[i]:
			if !bytes.Contains(line, []byte(`"result"`)) || len(line) < size {
				t.Fatalf("answer %d: %s", i, clip(string(line)))
			}
			i++
		case <-stall.C:
			now := arrived(i)
			if now == before {
				t.Fatalf("%d of %d answers arrived, then none for %s", now, n, answerStall)
			}
			before = now
			continue
		case <-ctx.Done():
			t.Fatalf("%d of %d answers arrived", arrived(i), n)
		}
		c.mu.Lock()
		c.lines = nil // the test keeps none of the 400 MiB
		c.mu.Unlock()
	}
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	peak := peakRSS(t, c.cmd.Process.Pid)
	heap, live := gcTracePeaks(t, c.stderr.String())
	// The bound holds at most 64 requests with their answers, 64 MiB of
	// answers live (65 MB measured with a host that reads slowly), and
	// the collector lets the heap grow to twice what is live. Without the
	// bound every answer is held, 400 MB live; a bound of 300 MiB of
	// answers left 172 MB live.
	if live > 120 || heap > 250 {
		t.Errorf("the trunk's heap reached %d MB with %d MB live, want at most 250 MB and 120 MB live", heap, live)
	}
	t.Logf("%d answers of %d KiB, unread until the trunk stopped: heap at most %d MB, %d MB live; peak RSS %d MiB before, %d MiB when the trunk stopped reading the host, %d MiB after the host read them all",
		n, size>>10, heap, live, base>>20, held>>20, peak>>20)
}

// gcTraceSizes matches a GODEBUG=gctrace=1 line's heap sizes: at the
// collection's start, at its end, and live after it, in MB.
var gcTraceSizes = regexp.MustCompile(`(?m)^gc \d+ .* (\d+)->(\d+)->(\d+) MB`)

// gcTracePeaks reads a process's collector trace: the largest heap any
// collection saw and the most that was ever live after one.
func gcTracePeaks(t *testing.T, stderr string) (heap, live int) {
	t.Helper()
	matches := gcTraceSizes.FindAllStringSubmatch(stderr, -1)
	if len(matches) == 0 {
		t.Fatalf("no collector trace in the trunk's stderr:\n%s", tail(stderr, 3000))
	}
	for _, m := range matches {
		start, _ := strconv.Atoi(m[1])
		end, _ := strconv.Atoi(m[2])
		after, _ := strconv.Atoi(m[3])
		heap, live = max(heap, start, end), max(live, after)
	}
	return heap, live
}
