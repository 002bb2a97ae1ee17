package stdio

import (
	"bufio"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// stderrTail keeps the last lines a server wrote to stderr, so a failure can
// say what the server said before it died.
type stderrTail struct {
	mu    sync.Mutex
	lines []string
	next  int
	full  bool
}

const TailLines = 20

func newStderrTail() *stderrTail {
	return &stderrTail{lines: make([]string, TailLines)}
}

func (t *stderrTail) add(line string) {
	t.mu.Lock()
	t.lines[t.next] = line
	t.next = (t.next + 1) % len(t.lines)
	if t.next == 0 {
		t.full = true
	}
	t.mu.Unlock()
}

// String returns the kept lines, oldest first, joined by newlines.
func (t *stderrTail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	if t.full {
		out = append(out, t.lines[t.next:]...)
	}
	out = append(out, t.lines[:t.next]...)
	return strings.Join(out, "\n")
}

// stderrLinesPerSecond bounds how many stderr lines of one server reach the
// log each second: a server that floods stderr must not flood the host's
// log (or slow the trunk down formatting records). The tail keeps every line.
const stderrLinesPerSecond = 50

// drainStderr copies a server's stderr into the log, one record per line
// (the logger already names the server), and into tail.
func drainStderr(r io.Reader, logger *slog.Logger, tail *stderrTail) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	var (
		window     time.Time
		logged     int
		suppressed int
	)
	for sc.Scan() {
		line := sc.Text()
		tail.add(line)
		if now := time.Now(); now.Sub(window) >= time.Second {
			if suppressed > 0 {
				logger.Warn("server stderr lines not logged (too many)", "lines", suppressed)
			}
			window, logged, suppressed = now, 0, 0
		}
		if logged++; logged > stderrLinesPerSecond {
			suppressed++
			continue
		}
		logger.Info("server stderr", "line", line)
	}
	// A line over the buffer's limit ends scanning; keep draining so the
	// server never blocks on a full pipe.
	_, _ = io.Copy(io.Discard, r)
}
