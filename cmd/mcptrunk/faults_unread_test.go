//go:build linux

package main

import (
	"bytes"
	"fmt"
	"testing"
	"time"
)

// TestFaultHostReadsNothing: a stdio host asks for 400 answers of 1 MiB
// and reads none. The trunk starts a bounded number of the calls, stops
// reading the host once it holds its bound's worth of answers (and says so
// in its log), its peak RSS stays under 300 MiB, and when the host reads,
// all 400 answers arrive.
func TestFaultHostReadsNothing(t *testing.T) {
	t.Parallel()
	const (
		n    = 400
		size = 1 << 20
	)
	ctx := testCtx(t, 120*time.Second)
	cfg := writeConfig(t, map[string]server{"notes": notesServer()}, nil)
	c := startRawTrunk(t, ctx, cfg)
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
	if _, err := waitStderrLine(ctx, c.stderr, 60*time.Second, "not reading its answers"); err != nil {
		t.Fatalf("the trunk did not stop reading a host that reads nothing: %v\nstderr:\n%s", err, tail(c.stderr.String(), 3000))
	}
	held := peakRSS(t, c.cmd.Process.Pid)
	c.resume()
	for i, ch := range answers {
		select {
		case line := <-ch:
			if !bytes.Contains(line, []byte(`"result"`)) || len(line) < size {
				t.Fatalf("answer %d: %s", i, clip(string(line)))
			}
		case <-ctx.Done():
			t.Fatalf("%d of %d answers arrived", i, n)
		}
		c.mu.Lock()
		c.lines = nil // the test keeps none of the 400 MiB
		c.mu.Unlock()
	}
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	peak := peakRSS(t, c.cmd.Process.Pid)
	if peak > 300<<20 {
		t.Errorf("the trunk's peak RSS reached %d MiB, want under 300 MiB", peak>>20)
	}
	t.Logf("%d answers of %d KiB, unread until the trunk stopped: peak RSS %d MiB before, %d MiB when the trunk stopped reading the host, %d MiB after the host read them all",
		n, size>>10, base>>20, held>>20, peak>>20)
}
