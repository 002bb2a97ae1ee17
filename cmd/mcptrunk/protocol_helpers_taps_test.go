package main

// Taps: an upstream started through `sh -c 'tee IN | server | tee OUT'`, so
// a test can read exactly what the upstream received from the trunk and
// what it sent back, without changing the upstream.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// tap records one upstream's traffic: in holds every line the upstream read
// from the trunk, out every line it wrote back.
type tap struct {
	in, out string
}

// tapped returns a config entry that runs argv behind two tees. The
// pipeline ends when the trunk closes the upstream's stdin (tee sees EOF,
// then the server does), and the trunk's process-group kill covers all of
// it.
func tapped(t testing.TB, argv ...string) (server, *tap) {
	t.Helper()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatalf("the taps need sh: %v", err)
	}
	dir := t.TempDir()
	tp := &tap{in: filepath.Join(dir, "in.jsonl"), out: filepath.Join(dir, "out.jsonl")}
	script := `in=$1; out=$2; shift 2; tee -a "$in" | "$@" | tee -a "$out"`
	args := append([]string{"-c", script, "tap", tp.in, tp.out}, argv...)
	return server{"command": sh, "args": args}, tp
}

// tapMsg is one JSON-RPC message seen by a tap.
type tapMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *rpcError       `json:"error"`
	Raw    string          `json:"-"`
}

func (m tapMsg) String() string { return m.Raw }

func readTap(path string) []tapMsg {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []tapMsg
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		var m tapMsg
		if len(line) == 0 || json.Unmarshal(line, &m) != nil {
			continue
		}
		m.Raw = string(line)
		out = append(out, m)
	}
	return out
}

// received is every message the upstream has read so far.
func (tp *tap) received() []tapMsg { return readTap(tp.in) }

// sent is every message the upstream has written so far.
func (tp *tap) sent() []tapMsg { return readTap(tp.out) }

// waitReceived waits until the upstream has read a message matching pred
// and returns the first one.
func (tp *tap) waitReceived(t testing.TB, ctx context.Context, what string, pred func(tapMsg) bool) tapMsg {
	t.Helper()
	return waitTap(t, ctx, what, tp.received, pred)
}

// waitSent waits until the upstream has written a message matching pred.
func (tp *tap) waitSent(t testing.TB, ctx context.Context, what string, pred func(tapMsg) bool) tapMsg {
	t.Helper()
	return waitTap(t, ctx, what, tp.sent, pred)
}

// waitAnswered waits until the upstream has sent a request matching pred
// and received the answer to it; it returns that answer.
func (tp *tap) waitAnswered(t testing.TB, ctx context.Context, what string, pred func(tapMsg) bool) tapMsg {
	t.Helper()
	req := tp.waitSent(t, ctx, what, pred)
	return tp.waitReceived(t, ctx, "the answer to "+what, func(m tapMsg) bool {
		return m.Method == "" && string(m.ID) == string(req.ID)
	})
}

// tapFrom reads what read does from the first message first accepts on:
// nothing until there is one.
func tapFrom(read func() []tapMsg, first func(tapMsg) bool) func() []tapMsg {
	return func() []tapMsg {
		msgs := read()
		if i := slices.IndexFunc(msgs, first); i >= 0 {
			return msgs[i:]
		}
		return nil
	}
}

func waitTap(t testing.TB, ctx context.Context, what string, read func() []tapMsg, pred func(tapMsg) bool) tapMsg {
	t.Helper()
	var found tapMsg
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err := eventually(ctx, 20*time.Millisecond, func() error {
		for _, m := range read() {
			if pred(m) {
				found = m
				return nil
			}
		}
		return fmt.Errorf("not seen")
	})
	if err != nil {
		var lines []string
		for _, m := range read() {
			lines = append(lines, tail(m.Raw, 300))
		}
		t.Fatalf("the tap never saw %s; it saw:\n%s", what, strings.Join(lines, "\n"))
	}
	return found
}

func isMethod(method string) func(tapMsg) bool {
	return func(m tapMsg) bool { return m.Method == method }
}

// trunkHostTapped is trunkHost with a tap between the host and the trunk:
// the tap's in is what the host sent, its out what the trunk answered.
func trunkHostTapped(t testing.TB, ctx context.Context, cfg string, hc hostConfig, version string) (*host, *tap) {
	t.Helper()
	entry, tp := tapped(t, trunkBin, "serve", "--config", cfg)
	args := entry["args"].([]string)
	return startHost(t, ctx, exec.Command(entry["command"].(string), args...), hc, version), tp
}

// initCaps returns the capabilities member of an initialize request.
func initCaps(t *testing.T, m tapMsg) map[string]json.RawMessage {
	t.Helper()
	var p struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil {
		t.Fatalf("initialize params %s: %v", m.Params, err)
	}
	return p.Capabilities
}
