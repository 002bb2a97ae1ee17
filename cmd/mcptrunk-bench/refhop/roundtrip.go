package refhop

import (
	"bufio"
	"os"
	"os/exec"
	"slices"
	"time"
)

// EchoRoundTrips measures what one more process on the path costs at the
// least: n round trips of line (one message and its newline) through a
// child process that only echoes it (this binary as PipeEchoCommand), over
// pipes like a stdio hop, with the caller busy for gap between round trips
// (as a client is between calls, so the child has gone idle). It returns
// the round trips' durations, sorted, after a tenth more to warm up.
func EchoRoundTrips(n int, gap time.Duration, line []byte) ([]time.Duration, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, PipeEchoCommand)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	}()
	r := bufio.NewReader(stdout)
	lat := make([]time.Duration, 0, n)
	for i := range n + n/10 {
		t0 := time.Now()
		if _, err := stdin.Write(line); err != nil {
			return nil, err
		}
		if _, err := r.ReadBytes('\n'); err != nil {
			return nil, err
		}
		if i >= n/10 { // the first tenth warms up
			lat = append(lat, time.Since(t0))
		}
		for t1 := time.Now(); time.Since(t1) < gap; {
		}
	}
	slices.Sort(lat)
	return lat, nil
}
