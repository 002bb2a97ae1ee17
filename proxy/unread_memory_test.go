package proxy

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// A stdio host that asks for 100 answers of 256 KiB and reads none, with
// the bounds at 8 calls and 1 MiB: the trunk starts at most
// stdioMaxHandled of the calls, keeps at most their answers (about
// stdioUnreadBytes), and stops reading the host; once the host reads,
// every answer arrives. (TestFaultHostReadsNothing: 400 of 1 MiB through
// the real trunk, at the real bounds.)
func TestStdioHostThatDoesNotRead(t *testing.T) {
	const (
		n    = 100
		size = 256 << 10
	)
	keepBytes, keepHandled := stdioUnreadBytes, stdioMaxHandled
	stdioUnreadBytes, stdioMaxHandled = 1<<20, 8
	t.Cleanup(func() { stdioUnreadBytes, stdioMaxHandled = keepBytes, keepHandled })
	text := strings.Repeat("x", size)
	var calls atomic.Int64
	srv := &memserver.Server{Tools: []json.RawMessage{memserver.Tool("big", "")}}
	srv.Handle = func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		calls.Add(1)
		return json.RawMessage(`{"content":[{"type":"text","text":"` + text + `"}]}`), nil
	}
	set := memserver.Set{"notes": srv}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	tr := New(memConfig(t, set, nil, nil), &Options{Dial: func(spec config.Spec, h jsonrpc.Handler) (upstream.Transport, error) { return set.Dial(spec, h) }})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := tr.Attach(jsonrpc.NewLineReader(inR), jsonrpc.NewLineWriter(outW), nil)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		_ = inW.Close()
		_ = outR.Close()
		<-served
		_ = tr.Close(context.Background())
	})
	out := bufio.NewReaderSize(outR, 4<<20)
	read := func() map[string]json.RawMessage {
		line, err := out.ReadBytes('\n')
		var m map[string]json.RawMessage
		if err != nil || json.Unmarshal(line, &m) != nil {
			t.Fatalf("reading the trunk: %v %.200s", err, line)
		}
		return m
	}
	_, _ = io.WriteString(inW, `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
	if m := read(); m["result"] == nil {
		t.Fatalf("initialize: %s", m["error"])
	}
	_, _ = io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")

	wrote := make(chan error, 1)
	go func() {
		for i := range n {
			if _, err := fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"mcp__notes__big","arguments":{}}}`+"\n", i); err != nil {
				wrote <- err
				return
			}
		}
		wrote <- nil
	}()
	// The trunk reads until it holds its bound's worth, then stops.
	deadline := time.Now().Add(30 * time.Second)
	for u := s.conn.Unanswered(); u.Waiting < stdioMaxHandled && u.UnreadBytes < stdioUnreadBytes; u = s.conn.Unanswered() {
		if time.Now().After(deadline) {
			t.Fatalf("the trunk did not stop reading a host that reads nothing: %+v", u)
		}
		time.Sleep(time.Millisecond) // polling the trunk's state, not waiting for time to pass
	}
	held := s.conn.Unanswered()
	started := calls.Load()
	if held.Handled > stdioMaxHandled || held.UnreadBytes > int64(stdioMaxHandled)*(size+1024) || started > int64(stdioMaxHandled) {
		t.Errorf("with the host not reading: %+v, %d calls sent to the server; want at most %d calls and their answers", held, started, stdioMaxHandled)
	}

	got := map[string]bool{}
	for len(got) < n {
		m := read()
		if len(m["result"]) < size || got[string(m["id"])] {
			t.Fatalf("answer %d: id %s, error %s", len(got), m["id"], m["error"])
		}
		got[string(m["id"])] = true
	}
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	u := s.conn.Unanswered()
	if u.MaxHandled > stdioMaxHandled || u.MaxUnreadBytes > int64(stdioMaxHandled)*(size+1024) {
		t.Errorf("over the whole run: %+v", u)
	}
	t.Logf("%d answers of %d KiB to a host that read none until the trunk stopped: the trunk held %d calls and %.1f MiB of answers (at most %d and %.1f MiB over the run), %d calls sent to the server meanwhile",
		n, size>>10, held.Handled, float64(held.UnreadBytes)/(1<<20), u.MaxHandled, float64(u.MaxUnreadBytes)/(1<<20), started)
}
