package main

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"slices"
	"time"
)

// pipeEchoCommand is the hidden subcommand hopRoundTrip runs: it copies
// each line from stdin back to stdout, and nothing else.
const pipeEchoCommand = "pipe-echo"

func pipeEcho(stdin io.Reader, stdout io.Writer) error {
	r := bufio.NewReader(stdin)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			if _, werr := stdout.Write(line); werr != nil {
				return werr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

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
	cmd := exec.Command(self, pipeEchoCommand)
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
