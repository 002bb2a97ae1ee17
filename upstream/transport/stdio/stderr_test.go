package stdio

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestDrainStderrBoundsTheLog(t *testing.T) {
	var in bytes.Buffer
	for i := range 1000 {
		fmt.Fprintf(&in, "line %d\n", i)
	}
	var log bytes.Buffer
	tail := newStderrTail()
	drainStderr(&in, slog.New(slog.NewTextHandler(&log, nil)), tail)

	if n := strings.Count(log.String(), `msg="server stderr"`); n != stderrLinesPerSecond {
		t.Errorf("logged %d stderr lines in one burst, want %d", n, stderrLinesPerSecond)
	}
	if !strings.Contains(tail.String(), "line 999") {
		t.Errorf("the tail lost the last line: %q", tail.String())
	}
	if got := strings.Count(tail.String(), "\n") + 1; got != TailLines {
		t.Errorf("tail has %d lines, want %d", got, TailLines)
	}
}
