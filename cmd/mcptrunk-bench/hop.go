package main

import (
	"bufio"
	"os"
	"os/exec"
	"slices"
	"time"

	"github.com/mcptrunk/mcptrunk/cmd/mcptrunk-bench/refhop"
)

// hopRoundTrip measures what one more process on the path costs at the
// least: the p50 round trip of a line through a child process that only
// echoes it, over pipes like a stdio hop, with the caller busy for gap
// between round trips (as a client is between calls, so the child has gone
// idle). The trunk adds one such round trip to every call.
func hopRoundTrip(n int, gap time.Duration) (time.Duration, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, err
	}
	cmd := exec.Command(self, refhop.PipeEchoCommand)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return 0, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	defer func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	}()
	r := bufio.NewReader(stdout)
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + smallText + `"}}}` + "\n")
	lat := make([]time.Duration, 0, n)
	for i := range n + n/10 {
		t0 := time.Now()
		if _, err := stdin.Write(msg); err != nil {
			return 0, err
		}
		if _, err := r.ReadBytes('\n'); err != nil {
			return 0, err
		}
		if i >= n/10 { // the first tenth warms up
			lat = append(lat, time.Since(t0))
		}
		for t1 := time.Now(); time.Since(t1) < gap; {
		}
	}
	slices.Sort(lat)
	return percentile(lat, 50), nil
}
