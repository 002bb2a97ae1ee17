package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

// methodLog is a Handler that echoes every request's params and keeps, in
// order, the method of each request and each notification it was handed.
type methodLog struct {
	mu              sync.Mutex
	requests, notes []string
}

func (l *methodLog) handler() handlerFuncs {
	return handlerFuncs{
		req: func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
			l.mu.Lock()
			l.requests = append(l.requests, method)
			l.mu.Unlock()
			return params, nil
		},
		notif: func(method string, _ json.RawMessage) {
			l.mu.Lock()
			l.notes = append(l.notes, method)
			l.mu.Unlock()
		},
	}
}

// methods returns copies of the request and notification methods seen so far.
func (l *methodLog) methods() (requests, notes []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.requests), slices.Clone(l.notes)
}

// A message whose id is null is not a request. With a method it is handled as
// a notification (no response); without one it is ignored as garbage.
func TestNullID(t *testing.T) {
	leakCheck(t)
	var seen methodLog
	opts, logBuf := captureLog()
	p := newRawPeer(t, seen.handler(), opts)
	call := goCall(p.c, testCtx(t), "q", nil)
	req := p.readRequest("q")

	p.send(`{"jsonrpc":"2.0","id":null,"method":"ping","params":{}}`)
	p.send(`{"jsonrpc":"2.0","id":null,"result":"for nobody"}`)
	p.send(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`)
	// The pending call is untouched by null-id responses.
	p.send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":"mine"}`)
	if r := waitCall(t, call); r.err != nil || string(r.res) != `"mine"` {
		t.Errorf("Call = %s, %v; want \"mine\"", r.res, r.err)
	}
	// The first line written after all that answers this request: nothing
	// was written for the null ids.
	p.send(`{"jsonrpc":"2.0","id":3,"method":"echo","params":"sync"}`)
	p.expectLine(`{"jsonrpc":"2.0","id":3,"result":"sync"}`)
	if err := p.close(); err != nil {
		t.Fatal(err)
	}
	for _, line := range p.rest() {
		t.Errorf("unexpected line: %q", line)
	}
	requests, notes := seen.methods()
	if strings.Join(requests, ",") != "echo" {
		t.Errorf("requests handled = %v, want only [echo]", requests)
	}
	if strings.Join(notes, ",") != "ping" {
		t.Errorf("notifications handled = %v, want [ping]", notes)
	}
	if c := strings.Count(logBuf.String(), "not JSON-RPC"); c != 2 {
		t.Errorf("logged %d garbage lines, want 2 (the null-id responses); log:\n%s", c, logBuf.String())
	}
}

func TestGarbageLinesAreSkipped(t *testing.T) {
	leakCheck(t)
	var seen methodLog
	opts, logBuf := captureLog()
	p := newRawPeer(t, seen.handler(), opts)

	garbage := []string{
		`not json at all`,
		`{"jsonrpc":"2.0","id":1,"method":`,                       // truncated
		`{"jsonrpc":"2.0"}`,                                       // neither request nor response
		`{"foo":"bar","baz":[1,2]}`,                               // neither
		`{"jsonrpc":"2.0","id":1,"method":"echo"} trailing words`, // not one JSON value
		`[1,2,3]`,
		`"a string"`,
		`null`,
		`{"jsonrpc":"2.0","method":"","params":{}}`, // empty method, no id
		`{"jsonrpc":"2.0","id":1,"method":42}`,      // method of the wrong type
		"\x00\xff\xfe binary",
		`{"jsonrpc":"2.0","id":1,"result":{"unterminated":"`,
	}
	silent := []string{"", "   ", "\t", "\r"} // blank lines are skipped without a word
	for _, l := range silent {
		p.send(l)
	}
	for _, l := range garbage {
		p.send(l)
	}
	// A garbage line that looks like a response but has an id never sent.
	p.send(`{"jsonrpc":"2.0","id":1,"result":"stray"}`)

	// Later valid messages still work, in both directions.
	p.send(`{"jsonrpc":"2.0","method":"notifications/ok","params":{}}`)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"x":1}}`)
	p.expectLine(`{"jsonrpc":"2.0","id":1,"result":{"x":1}}`)
	call := goCall(p.c, testCtx(t), "q", nil)
	req := p.readRequest("q")
	p.send(`garbage between request and response`)
	p.send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":[true]}`)
	if r := waitCall(t, call); r.err != nil || string(r.res) != `[true]` {
		t.Errorf("Call after garbage = %s, %v", r.res, r.err)
	}

	if err := p.close(); err != nil {
		t.Fatalf("Serve = %v", err)
	}
	for _, line := range p.rest() {
		t.Errorf("unexpected line written in reply to garbage: %q", line)
	}
	if requests, notes := seen.methods(); strings.Join(requests, ",") != "echo" || strings.Join(notes, ",") != "notifications/ok" {
		t.Errorf("handler saw requests %v and notifications %v; want [echo] and [notifications/ok]", requests, notes)
	}
	// Only the first five garbage lines are logged.
	if c := strings.Count(logBuf.String(), "not JSON-RPC"); c != 5 {
		t.Errorf("logged %d garbage lines, want 5; log:\n%s", c, logBuf.String())
	}
}

func TestGarbageLoggingIsRateLimited(t *testing.T) {
	leakCheck(t)
	opts, logBuf := captureLog()
	p := newRawPeer(t, echo, opts)
	for i := 1; i <= 2500; i++ {
		p.send(fmt.Sprintf("junk line %d", i))
	}
	// The read loop is sequential: once this is answered, every junk line
	// has been through it.
	p.send(`{"jsonrpc":"2.0","id":1,"method":"echo","params":1}`)
	p.expectLine(`{"jsonrpc":"2.0","id":1,"result":1}`)
	log := logBuf.String()
	// Lines 1-5, then every thousandth.
	if c := strings.Count(log, "not JSON-RPC"); c != 7 {
		t.Errorf("logged %d garbage lines, want 7; log:\n%s", c, log)
	}
	for _, n := range []string{"junk line 1\"", "junk line 5\"", "count=1000", "count=2000"} {
		if !strings.Contains(log, n) {
			t.Errorf("log lacks %q:\n%s", n, log)
		}
	}
	if strings.Contains(log, "junk line 6\"") {
		t.Errorf("line 6 was logged:\n%s", log)
	}
}

func TestLongGarbageLineIsTruncatedInLog(t *testing.T) {
	leakCheck(t)
	opts, logBuf := captureLog()
	p := newRawPeer(t, echo, opts)
	p.send(strings.Repeat("x", 100_000))
	p.send(`{"jsonrpc":"2.0","id":1,"method":"echo","params":1}`)
	p.expectLine(`{"jsonrpc":"2.0","id":1,"result":1}`)
	if log := logBuf.String(); len(log) > 2000 || !strings.Contains(log, strings.Repeat("x", 120)) {
		t.Errorf("garbage log line is %d bytes:\n%.500s", len(log), log)
	}
}

func TestResponseWithUnknownIDIsIgnored(t *testing.T) {
	leakCheck(t)
	opts, logBuf := captureLog()
	p := newRawPeer(t, echo, opts)
	ctx := testCtx(t)

	call := goCall(p.c, ctx, "q", nil)
	req := p.readRequest("q")
	for _, id := range []string{`999`, `"abc"`, `0`, `-7`, `1.5`, `{"a":1}`, `[1]`, `99999999999999999999999`} {
		if id == string(req.ID) {
			t.Fatalf("test bug: id %s was sent", id)
		}
		p.send(`{"jsonrpc":"2.0","id":` + id + `,"result":"wrong"}`)
		p.send(`{"jsonrpc":"2.0","id":` + id + `,"error":{"code":1,"message":"wrong"}}`)
	}
	// Sequential read loop: had any of those been taken for our call, it
	// would have returned "wrong".
	p.send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":"right"}`)
	if r := waitCall(t, call); r.err != nil || string(r.res) != `"right"` {
		t.Fatalf("Call = %s, %v; want \"right\"", r.res, r.err)
	}
	// A second response to the same id is dropped too.
	p.send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":"duplicate"}`)

	call = goCall(p.c, ctx, "q2", nil)
	req2 := p.readRequest("q2")
	if bytes.Equal(req2.ID, req.ID) {
		t.Fatalf("id %s reused", req.ID)
	}
	p.send(`{"jsonrpc":"2.0","id":` + string(req2.ID) + `,"result":"second"}`)
	if r := waitCall(t, call); r.err != nil || string(r.res) != `"second"` {
		t.Fatalf("second Call = %s, %v", r.res, r.err)
	}
	if err := p.close(); err != nil {
		t.Fatal(err)
	}
	for _, line := range p.rest() {
		t.Errorf("unexpected line: %q", line)
	}
	if !strings.Contains(logBuf.String(), "never sent") {
		t.Errorf("a non-numeric response id was not logged:\n%s", logBuf.String())
	}
}

// TestFirstInvalidLine: the Conn keeps the first line that was not
// JSON-RPC, clipped, for a failure message to quote; later ones do not
// replace it.
func TestFirstInvalidLine(t *testing.T) {
	leakCheck(t)
	p := newRawPeer(t, (&methodLog{}).handler(), nil)
	if got := p.c.FirstInvalidLine(); got != "" {
		t.Errorf("before any line: %q", got)
	}
	p.send("  hello not json  ")
	p.send(`{"not":"json-rpc"}`)
	p.send(strings.Repeat("x", 500))
	// The lines are read in order: once the answer to a call is in, so are they.
	call := goCall(p.c, testCtx(t), "q", nil)
	req := p.readRequest("q")
	p.send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":1}`)
	if r := waitCall(t, call); r.err != nil {
		t.Fatal(r.err)
	}
	if got := p.c.FirstInvalidLine(); got != "hello not json" {
		t.Errorf("FirstInvalidLine = %q, want %q", got, "hello not json")
	}

	q := newRawPeer(t, (&methodLog{}).handler(), nil)
	q.send(strings.Repeat("y", 500))
	call = goCall(q.c, testCtx(t), "q", nil)
	req = q.readRequest("q")
	q.send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":1}`)
	if r := waitCall(t, call); r.err != nil {
		t.Fatal(r.err)
	}
	if got := q.c.FirstInvalidLine(); got != strings.Repeat("y", 120) {
		t.Errorf("a long line: %q, want its first 120 bytes", got)
	}
}
