package audit

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/testkit"
	"github.com/mcptrunk/mcptrunk/proxy/observe"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testClock is the time every test line starts at.
var testClock = time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)

// newTestLog opens a log at path with a fixed clock and a log buffer.
func newTestLog(t *testing.T, a config.Audit) (*Log, *testkit.Buffer) {
	t.Helper()
	buf := &testkit.Buffer{}
	l := New(Options{Audit: a, Logger: slog.New(slog.NewTextHandler(buf, nil)), now: func() time.Time { return testClock }})
	t.Cleanup(func() { l.Close() })
	return l, buf
}

// request runs one request through the log as the trunk does.
func request(l *Log, r observe.Request, out observe.Outcome) {
	_, end := l.Begin(context.Background(), r)
	end(out)
}

// readLines decodes every line of an audit file.
func readLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s: line %q: %v", path, sc.Text(), err)
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// waitFor polls cond until it holds, failing the test after a deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
