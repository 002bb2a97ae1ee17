package jsonrpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// waitLimit bounds every wait in these tests, so a bug shows up as a failure
// rather than a hung test binary.
const waitLimit = 10 * time.Second

// leakCheck verifies, after everything the test registered later has been
// cleaned up, that the test left no goroutine behind. Tests here do not run in
// parallel, so the check is per test.
func leakCheck(t *testing.T) {
	t.Helper()
	t.Cleanup(func() { goleak.VerifyNone(t) })
}

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	t.Cleanup(cancel)
	return ctx
}

func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(waitLimit):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// handlerFuncs adapts two funcs to Handler. A nil req answers method not
// found; a nil notif drops notifications.
type handlerFuncs struct {
	req   func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
	notif func(method string, params json.RawMessage)
}

func (h handlerFuncs) HandleRequest(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if h.req == nil {
		return nil, Errorf(CodeMethodNotFound, "method %q not found", method)
	}
	return h.req(ctx, method, params)
}

func (h handlerFuncs) HandleNotification(method string, params json.RawMessage) {
	if h.notif != nil {
		h.notif(method, params)
	}
}

// echo answers every request with its params.
var echo = handlerFuncs{req: func(_ context.Context, _ string, params json.RawMessage) (json.RawMessage, error) {
	return params, nil
}}

// recorder forwards writes to w and keeps a copy of every frame the Conn
// tried to write (recorded before forwarding, so even a write that failed
// is visible).
type recorder struct {
	w   io.Writer
	mu  sync.Mutex
	buf bytes.Buffer
}

func (r *recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	r.buf.Write(p)
	r.mu.Unlock()
	return r.w.Write(p)
}

func (r *recorder) bytes() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return bytes.Clone(r.buf.Bytes())
}

// wireMsg is a decoded line of the raw stream, for assertions.
type wireMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *Error          `json:"error"`
}

// frames splits a recorded stream into lines, failing the test if the stream
// does not end in a newline or if any line is not one complete JSON object.
func frames(t *testing.T, stream []byte) []wireMsg {
	t.Helper()
	if len(stream) == 0 {
		return nil
	}
	if stream[len(stream)-1] != '\n' {
		t.Fatalf("stream does not end with a newline: ...%q", tail(stream))
	}
	var out []wireMsg
	for _, line := range bytes.Split(stream[:len(stream)-1], []byte("\n")) {
		var m wireMsg
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("line is not one JSON object (%v): %q", err, head(line))
		}
		if m.JSONRPC != "2.0" {
			t.Errorf("line without jsonrpc 2.0: %q", head(line))
		}
		out = append(out, m)
	}
	return out
}

func head(b []byte) []byte {
	if len(b) > 200 {
		return b[:200]
	}
	return b
}

func tail(b []byte) []byte {
	if len(b) > 200 {
		return b[len(b)-200:]
	}
	return b
}

// pair is two Conns wired back to back with io.Pipe, each serving on its own
// goroutine. Closing the two pipe writers ends both Serves with a clean EOF.
type pair struct {
	t          *testing.T
	a, b       *Conn
	aOut, bOut *recorder      // what a wrote (b reads), what b wrote (a reads)
	abW, baW   *io.PipeWriter // a -> b, b -> a
	aServe     chan error
	bServe     chan error
	once       sync.Once
	aErr, bErr error
}

func newPair(t *testing.T, ha, hb Handler, opts *Options) *pair {
	t.Helper()
	return newPairWrapped(t, ha, hb, opts, nil)
}

// newPairWrapped is newPair with a's writer passed through wrapA (between
// the pipe and the recorder).
func newPairWrapped(t *testing.T, ha, hb Handler, opts *Options, wrapA func(io.Writer) io.Writer) *pair {
	t.Helper()
	abR, abW := io.Pipe()
	baR, baW := io.Pipe()
	var aw io.Writer = abW
	if wrapA != nil {
		aw = wrapA(abW)
	}
	p := &pair{
		t:      t,
		aOut:   &recorder{w: aw},
		bOut:   &recorder{w: baW},
		abW:    abW,
		baW:    baW,
		aServe: make(chan error, 1),
		bServe: make(chan error, 1),
	}
	p.a = NewConn(baR, p.aOut, ha, opts)
	p.b = NewConn(abR, p.bOut, hb, opts)
	go func() { p.aServe <- p.a.Serve() }()
	go func() { p.bServe <- p.b.Serve() }()
	t.Cleanup(func() {
		aErr, bErr := p.close()
		if aErr != nil || bErr != nil {
			t.Errorf("Serve on a clean EOF returned a=%v b=%v, want nil", aErr, bErr)
		}
	})
	return p
}

// close closes both pipes and waits for both Serves (and so every handler) to
// return. It is idempotent.
func (p *pair) close() (aErr, bErr error) {
	p.once.Do(func() {
		p.abW.Close()
		p.baW.Close()
		p.aErr = waitServe(p.t, p.aServe, "a")
		p.bErr = waitServe(p.t, p.bServe, "b")
	})
	return p.aErr, p.bErr
}

func waitServe(t *testing.T, ch <-chan error, name string) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(waitLimit):
		t.Fatalf("Serve of %s did not return", name)
		return nil
	}
}

// rawPeer is a Conn whose peer is the test itself: the test writes lines the
// Conn reads and reads every line the Conn writes.
type rawPeer struct {
	t     *testing.T
	c     *Conn
	in    *io.PipeWriter // test -> Conn
	out   *io.PipeWriter // Conn -> test (closed by close)
	serve chan error

	mu       sync.Mutex
	lines    [][]byte
	next     int
	notify   chan struct{}
	readDone chan struct{}
	closed   bool
	serveErr error
}

func newRawPeer(t *testing.T, h Handler, opts *Options) *rawPeer {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &rawPeer{
		t:        t,
		in:       inW,
		out:      outW,
		serve:    make(chan error, 1),
		notify:   make(chan struct{}, 1),
		readDone: make(chan struct{}),
	}
	p.c = NewConn(inR, outW, h, opts)
	go func() {
		defer close(p.readDone)
		br := bufio.NewReader(outR)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				p.mu.Lock()
				p.lines = append(p.lines, line)
				p.mu.Unlock()
				select {
				case p.notify <- struct{}{}:
				default:
				}
			}
			if err != nil {
				return
			}
		}
	}()
	go func() { p.serve <- p.c.Serve() }()
	t.Cleanup(func() {
		if p.closed {
			return // the test closed it and checked Serve's error itself
		}
		if err := p.close(); err != nil {
			t.Errorf("Serve on a clean EOF returned %v, want nil", err)
		}
	})
	return p
}

func (p *rawPeer) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatalf("writing %q to the conn: %v", line, err)
	}
}

// readLine returns the next line the Conn wrote, newline included.
func (p *rawPeer) readLine() []byte {
	p.t.Helper()
	deadline := time.After(waitLimit)
	for {
		p.mu.Lock()
		if p.next < len(p.lines) {
			line := p.lines[p.next]
			p.next++
			p.mu.Unlock()
			return line
		}
		p.mu.Unlock()
		select {
		case <-p.notify:
		case <-deadline:
			p.t.Fatal("timed out waiting for the conn to write a line")
			return nil
		}
	}
}

func (p *rawPeer) expectLine(want string) {
	p.t.Helper()
	if got := p.readLine(); string(got) != want+"\n" {
		p.t.Fatalf("conn wrote\n  %q\nwant\n  %q", got, want+"\n")
	}
}

// readRequest reads the next line and decodes it as a request.
func (p *rawPeer) readRequest(method string) wireMsg {
	p.t.Helper()
	line := p.readLine()
	var m wireMsg
	if err := json.Unmarshal(line, &m); err != nil {
		p.t.Fatalf("conn wrote a line that is not JSON: %q", line)
	}
	if m.Method != method || len(m.ID) == 0 {
		p.t.Fatalf("conn wrote %q, want a %s request", line, method)
	}
	return m
}

// close ends the input (clean EOF), waits for Serve and for every line the
// Conn wrote, and returns Serve's error. It is idempotent.
func (p *rawPeer) close() error {
	return p.closeWith(nil)
}

func (p *rawPeer) closeWith(err error) error {
	p.t.Helper()
	if p.closed {
		return p.serveErr
	}
	p.closed = true
	p.in.CloseWithError(err)
	p.serveErr = waitServe(p.t, p.serve, "raw peer conn")
	p.out.Close()
	waitClosed(p.t, p.readDone, "the line reader to finish")
	return p.serveErr
}

// rest returns the lines written and not yet read; call after close.
func (p *rawPeer) rest() [][]byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.lines[p.next:]
	p.next = len(p.lines)
	return r
}

// syncBuffer is a log sink that is safe to read while the Conn writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func captureLog() (*Options, *syncBuffer) {
	buf := &syncBuffer{}
	logger := slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return &Options{Logger: logger}, buf
}

// --- round trips ----------------------------------------------------------

func TestCallRoundTripKeepsRawBytes(t *testing.T) {
	leakCheck(t)
	cases := []struct{ name, raw string }{
		{"object", `{"a":1,"b":"two"}`},
		{"unicode escapes", `{"s":"caf\u00e9 \ud83d\ude00 \u2028\u2029 \u0000 \uFFFF","raw":"café 😀 ` + "\u2028" + `"}`},
		{"html characters", `{"h":"<b>&amp;</b> a>b","esc":"\u003c\u003e\u0026"}`},
		{"big numbers", `{"n":12345678901234567890,"f":1.000000000000000000000001,"e":-1.5E+308,"huge":1e400,"z":-0}`},
		{"nested", `{"a":{"b":{"c":[1,[2,[3,{"d":null}]]],"e":{}},"f":[]}}`},
		{"unknown fields", `{"content":[{"type":"hologram","x-vendor":{"k":true}}],"_meta":{"progressToken":"t"},"isError":false,"someFutureField":[1,"2",null]}`},
		{"whitespace inside", "{ \"a\" : [ 1 , 2 ] ,\t\"b\" : { } }"},
		{"duplicate keys", `{"a":1,"a":2}`},
		{"escapes", `{"p":"a\/b\"c\\d\n\t\r\b\f"}`},
		{"null", `null`},
		{"string", `"just a string"`},
		{"number", `12345678901234567890`},
		{"array", `[1,"x",{"y":[]}]`},
		{"bool", `true`},
		{"empty object", `{}`},
	}
	var gotParams sync.Map // method -> params the handler saw
	hb := handlerFuncs{req: func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		gotParams.Store(method, bytes.Clone(params))
		i, err := strconv.Atoi(strings.TrimPrefix(method, "case/"))
		if err != nil {
			return nil, err
		}
		return json.RawMessage(cases[i].raw), nil
	}}
	p := newPair(t, echo, hb, nil)
	ctx := testCtx(t)
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			method := fmt.Sprintf("case/%d", i)
			got, err := p.a.Call(ctx, method, json.RawMessage(tc.raw))
			if err != nil {
				t.Fatalf("Call: %v", err)
			}
			if !bytes.Equal(got, []byte(tc.raw)) {
				t.Errorf("result bytes changed\n got: %s\nwant: %s", got, tc.raw)
			}
			params, _ := gotParams.Load(method)
			if !bytes.Equal(params.([]byte), []byte(tc.raw)) {
				t.Errorf("params bytes changed\n got: %s\nwant: %s", params, tc.raw)
			}
		})
	}

	// And in the other direction, over the same pipes.
	got, err := p.b.Call(ctx, "anything", json.RawMessage(`{"n":12345678901234567890}`))
	if err != nil || string(got) != `{"n":12345678901234567890}` {
		t.Errorf("b -> a Call = %s, %v", got, err)
	}
}

func TestNilResultIsEmptyObjectAndNoParamsIsNil(t *testing.T) {
	leakCheck(t)
	var sawParams atomic.Value
	hb := handlerFuncs{req: func(_ context.Context, _ string, params json.RawMessage) (json.RawMessage, error) {
		sawParams.Store(params == nil)
		return nil, nil
	}}
	p := newPair(t, echo, hb, nil)
	got, err := p.a.Call(testCtx(t), "ping", nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != `{}` {
		t.Errorf("nil result arrived as %q, want {}", got)
	}
	if v, _ := sawParams.Load().(bool); !v {
		t.Errorf("handler got non-nil params for a request sent without params")
	}
}

func TestHandlerErrorPassesThroughUnchanged(t *testing.T) {
	leakCheck(t)
	data := `{"big":12345678901234567890,"s":"caf\u00e9 <b>bad</b> & \"q\"","raw":"ü","nested":{"a":[1,{"b":null}]},"unknown":true}`
	cases := []struct {
		name     string
		err      error
		wantCode int
		wantMsg  string
		wantData string
	}{
		{
			name:     "error with raw data",
			err:      &Error{Code: -32042, Message: `tool failed: <timeout> & "quoted" ünï`, Data: json.RawMessage(data)},
			wantCode: -32042, wantMsg: `tool failed: <timeout> & "quoted" ünï`, wantData: data,
		},
		{
			name:     "wrapped error",
			err:      fmt.Errorf("while calling: %w", &Error{Code: CodeInvalidParams, Message: "bad params", Data: json.RawMessage(`[1,2,12345678901234567890]`)}),
			wantCode: CodeInvalidParams, wantMsg: "bad params", wantData: `[1,2,12345678901234567890]`,
		},
		{
			name:     "no data",
			err:      Errorf(CodeMethodNotFound, "no such method %q", "x/y"),
			wantCode: CodeMethodNotFound, wantMsg: `no such method "x/y"`,
		},
		{
			name:     "null data",
			err:      &Error{Code: 7, Message: "m", Data: json.RawMessage(`null`)},
			wantCode: 7, wantMsg: "m", wantData: `null`,
		},
		{
			name:     "string data",
			err:      &Error{Code: CodeUnavailable, Message: "gone", Data: json.RawMessage(`"<html>502 Bad Gateway</html>"`)},
			wantCode: CodeUnavailable, wantMsg: "gone", wantData: `"<html>502 Bad Gateway</html>"`,
		},
		{
			name:     "pretty-printed data is compacted",
			err:      &Error{Code: 1, Message: "m", Data: json.RawMessage("{\n  \"a\": [\n    1,\n    2\n  ]\r\n}")},
			wantCode: 1, wantMsg: "m", wantData: `{"a":[1,2]}`,
		},
		{
			name:     "plain Go error",
			err:      errors.New("disk on fire"),
			wantCode: CodeInternalError, wantMsg: "disk on fire",
		},
		{
			name:     "wrapped plain Go error",
			err:      fmt.Errorf("reading: %w", io.ErrUnexpectedEOF),
			wantCode: CodeInternalError, wantMsg: "reading: unexpected EOF",
		},
	}
	hb := handlerFuncs{req: func(_ context.Context, method string, _ json.RawMessage) (json.RawMessage, error) {
		i, _ := strconv.Atoi(method)
		return json.RawMessage(`"must not be sent"`), cases[i].err
	}}
	p := newPair(t, echo, hb, nil)
	ctx := testCtx(t)
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := p.a.Call(ctx, strconv.Itoa(i), nil)
			if got != nil {
				t.Errorf("Call returned a result %q with the error", got)
			}
			var rpcErr *Error
			if !errors.As(err, &rpcErr) {
				t.Fatalf("Call error %v (%T) is not an *Error", err, err)
			}
			if rpcErr.Code != tc.wantCode {
				t.Errorf("code = %d, want %d", rpcErr.Code, tc.wantCode)
			}
			if rpcErr.Message != tc.wantMsg {
				t.Errorf("message = %q, want %q", rpcErr.Message, tc.wantMsg)
			}
			if !bytes.Equal(rpcErr.Data, []byte(tc.wantData)) {
				t.Errorf("data bytes changed\n got: %s\nwant: %s", rpcErr.Data, tc.wantData)
			}
		})
	}
	// The error responses carried no result member.
	p.close()
	for _, m := range frames(t, p.bOut.bytes()) {
		if m.Error != nil && m.Result != nil {
			t.Errorf("error response also carries a result: %s", m.Result)
		}
	}
}

// An *Error whose Data is not valid JSON cannot be encoded. The caller must
// still get an answer instead of waiting forever.
func TestHandlerErrorWithInvalidDataStillAnswers(t *testing.T) {
	leakCheck(t)
	hb := handlerFuncs{req: func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		return nil, &Error{Code: 42, Message: "broken data", Data: json.RawMessage(`{not json`)}
	}}
	p := newPair(t, echo, hb, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := p.a.Call(ctx, "x", nil)
	var rpcErr *Error
	if !errors.As(err, &rpcErr) {
		t.Fatalf("Call = %v, want a JSON-RPC error response", err)
	}
	if rpcErr.Code != 42 || rpcErr.Message != "broken data" {
		t.Errorf("error = %+v, want code 42 and the handler's message", rpcErr)
	}
}

func TestHandlerPanicBecomesInternalError(t *testing.T) {
	leakCheck(t)
	hb := handlerFuncs{req: func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		switch method {
		case "panic":
			panic("handler exploded")
		case "panic-error":
			panic(errors.New("an error value"))
		case "nil-deref":
			var m map[string]*int
			return json.RawMessage(strconv.Itoa(*m["x"])), nil
		}
		return params, nil
	}}
	opts, logBuf := captureLog()
	p := newPair(t, echo, hb, opts)
	ctx := testCtx(t)
	for round := 0; round < 3; round++ {
		for _, method := range []string{"panic", "panic-error", "nil-deref"} {
			_, err := p.a.Call(ctx, method, nil)
			var rpcErr *Error
			if !errors.As(err, &rpcErr) || rpcErr.Code != CodeInternalError {
				t.Fatalf("Call(%s) = %v, want an internal error (%d)", method, err, CodeInternalError)
			}
			if !strings.Contains(rpcErr.Message, method) {
				t.Errorf("internal error message %q does not name the method", rpcErr.Message)
			}
			got, err := p.a.Call(ctx, "ok", json.RawMessage(`{"after":"`+method+`"}`))
			if err != nil || string(got) != `{"after":"`+method+`"}` {
				t.Fatalf("connection broken after a panic: %s, %v", got, err)
			}
		}
	}
	if !strings.Contains(logBuf.String(), "handler exploded") {
		t.Errorf("panic was not logged; log:\n%s", logBuf.String())
	}
	select {
	case <-p.b.Done():
		t.Fatal("the panicking side's connection ended")
	default:
	}
}

func TestNotificationsArriveInOrder(t *testing.T) {
	leakCheck(t)
	const n = 1000
	type note struct {
		method string
		params string
	}
	collect := func(got *[]note, mu *sync.Mutex, all chan struct{}) func(string, json.RawMessage) {
		return func(method string, params json.RawMessage) {
			mu.Lock()
			defer mu.Unlock()
			*got = append(*got, note{method, string(params)})
			if len(*got) == n {
				close(all)
			}
		}
	}
	var aMu, bMu sync.Mutex
	var aGot, bGot []note
	aAll, bAll := make(chan struct{}), make(chan struct{})
	p := newPair(t,
		handlerFuncs{notif: collect(&aGot, &aMu, aAll)},
		handlerFuncs{notif: collect(&bGot, &bMu, bAll)},
		nil)

	// Both directions at once.
	var wg sync.WaitGroup
	send := func(c *Conn) {
		defer wg.Done()
		for i := 0; i < n; i++ {
			if err := c.Notify("notifications/progress", json.RawMessage(fmt.Sprintf(`{"progress":%d,"big":12345678901234567890}`, i))); err != nil {
				t.Errorf("Notify %d: %v", i, err)
				return
			}
		}
	}
	wg.Add(2)
	go send(p.a)
	go send(p.b)
	wg.Wait()
	waitClosed(t, aAll, "a to receive every notification")
	waitClosed(t, bAll, "b to receive every notification")

	check := func(side string, mu *sync.Mutex, got []note) {
		mu.Lock()
		defer mu.Unlock()
		if len(got) != n {
			t.Fatalf("%s received %d notifications, want %d", side, len(got), n)
		}
		for i, nt := range got {
			want := fmt.Sprintf(`{"progress":%d,"big":12345678901234567890}`, i)
			if nt.method != "notifications/progress" || nt.params != want {
				t.Fatalf("%s notification %d = %s %s, want %s", side, i, nt.method, nt.params, want)
			}
		}
	}
	check("a", &aMu, aGot)
	check("b", &bMu, bGot)

	// Notifications get no response.
	p.close()
	for _, m := range frames(t, p.aOut.bytes()) {
		if len(m.ID) != 0 {
			t.Errorf("a wrote a message with an id: %+v", m)
		}
	}
}

func TestConcurrentCallsEachGetTheirOwnAnswer(t *testing.T) {
	leakCheck(t)
	const n = 200
	// Every handler waits until all n are in flight at once, so responses
	// cannot come back in request order by accident.
	barrier := func() func(ctx context.Context) error {
		var arrived atomic.Int32
		all := make(chan struct{})
		return func(ctx context.Context) error {
			if arrived.Add(1) == n {
				close(all)
			}
			select {
			case <-all:
				return nil
			case <-time.After(waitLimit):
				return errors.New("not all requests were handled concurrently")
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	handler := func(wait func(context.Context) error) handlerFuncs {
		return handlerFuncs{req: func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
			if err := wait(ctx); err != nil {
				return nil, err
			}
			var in struct{ N int }
			if err := json.Unmarshal(params, &in); err != nil {
				return nil, err
			}
			if in.N%7 == 0 {
				return nil, &Error{Code: 1000 + in.N, Message: method}
			}
			return json.RawMessage(fmt.Sprintf(`{"n":%d,"method":%q}`, in.N, method)), nil
		}}
	}
	p := newPair(t, handler(barrier()), handler(barrier()), nil)
	ctx := testCtx(t)

	var wg sync.WaitGroup
	run := func(c *Conn, side string) {
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				method := fmt.Sprintf("%s/%d", side, i)
				got, err := c.Call(ctx, method, json.RawMessage(fmt.Sprintf(`{"n":%d}`, i)))
				if i%7 == 0 {
					var rpcErr *Error
					if !errors.As(err, &rpcErr) || rpcErr.Code != 1000+i || rpcErr.Message != method {
						t.Errorf("Call %s = %s, %v; want error %d", method, got, err, 1000+i)
					}
					return
				}
				want := fmt.Sprintf(`{"n":%d,"method":%q}`, i, method)
				if err != nil || string(got) != want {
					t.Errorf("Call %s = %s, %v; want %s", method, got, err, want)
				}
			}()
		}
	}
	run(p.a, "a")
	run(p.b, "b")
	wg.Wait()
}

// --- cancellation ---------------------------------------------------------

// blocker is a handler whose "block" method waits for its ctx to end, then
// returns a result that must never be sent.
type blocker struct {
	started chan struct{}
	ended   chan error // the handler ctx's error
	notes   chan string
}

func newBlocker() *blocker {
	return &blocker{started: make(chan struct{}, 16), ended: make(chan error, 16), notes: make(chan string, 16)}
}

func (b *blocker) handler() handlerFuncs {
	return handlerFuncs{
		req: func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
			if method != "block" {
				return params, nil
			}
			b.started <- struct{}{}
			<-ctx.Done()
			b.ended <- ctx.Err()
			return json.RawMessage(`"too late"`), nil
		},
		notif: func(method string, _ json.RawMessage) { b.notes <- method },
	}
}

func (b *blocker) waitStarted(t *testing.T) {
	t.Helper()
	select {
	case <-b.started:
	case <-time.After(waitLimit):
		t.Fatal("the peer's handler never started")
	}
}

func (b *blocker) waitEnded(t *testing.T) error {
	t.Helper()
	select {
	case err := <-b.ended:
		return err
	case <-time.After(waitLimit):
		t.Fatal("the peer's handler ctx was never cancelled")
		return nil
	}
}

type callResult struct {
	res json.RawMessage
	err error
	at  time.Time
}

func goCall(c *Conn, ctx context.Context, method string, params json.RawMessage) <-chan callResult {
	ch := make(chan callResult, 1)
	go func() {
		res, err := c.Call(ctx, method, params)
		ch <- callResult{res, err, time.Now()}
	}()
	return ch
}

func waitCall(t *testing.T, ch <-chan callResult) callResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(waitLimit):
		t.Fatal("Call did not return")
		return callResult{}
	}
}

// requestID finds the id a side used for its (only) request of method.
func requestID(t *testing.T, msgs []wireMsg, method string) json.RawMessage {
	t.Helper()
	var id json.RawMessage
	for _, m := range msgs {
		if m.Method == method && len(m.ID) > 0 {
			if id != nil {
				t.Fatalf("more than one %s request", method)
			}
			id = m.ID
		}
	}
	if id == nil {
		t.Fatalf("no %s request on the stream", method)
	}
	return id
}

// cancellations returns the params of every notifications/cancelled sent.
func cancellations(msgs []wireMsg) []struct {
	RequestID json.RawMessage `json:"requestId"`
	Reason    string          `json:"reason"`
} {
	var out []struct {
		RequestID json.RawMessage `json:"requestId"`
		Reason    string          `json:"reason"`
	}
	for _, m := range msgs {
		if m.Method != "notifications/cancelled" {
			continue
		}
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
			Reason    string          `json:"reason"`
		}
		if err := json.Unmarshal(m.Params, &p); err != nil {
			p.Reason = "UNPARSEABLE PARAMS"
		}
		if len(m.ID) != 0 {
			p.Reason = "SENT WITH AN ID"
		}
		out = append(out, p)
	}
	return out
}

func assertNoResponse(t *testing.T, msgs []wireMsg, id json.RawMessage) {
	t.Helper()
	for _, m := range msgs {
		if m.Method == "" && bytes.Equal(m.ID, id) {
			t.Errorf("a response was written for cancelled request %s: result=%s error=%v", id, m.Result, m.Error)
		}
	}
}

func TestCallerCancelCancelsPeerHandler(t *testing.T) {
	leakCheck(t)
	blk := newBlocker()
	p := newPair(t, echo, blk.handler(), nil)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	call := goCall(p.a, ctx, "block", json.RawMessage(`{"q":1}`))
	blk.waitStarted(t)
	cancelledAt := time.Now()
	cancel()

	r := waitCall(t, call)
	if !errors.Is(r.err, context.Canceled) {
		t.Fatalf("Call = %s, %v; want context.Canceled", r.res, r.err)
	}
	if r.res != nil {
		t.Errorf("cancelled Call returned a result %s", r.res)
	}
	if d := r.at.Sub(cancelledAt); d > 2*time.Second {
		t.Errorf("Call took %v to return after cancellation", d)
	}
	if err := blk.waitEnded(t); !errors.Is(err, context.Canceled) {
		t.Errorf("peer handler ctx ended with %v, want context.Canceled", err)
	}

	// The connection is still usable in both directions.
	ctx2 := testCtx(t)
	if got, err := p.a.Call(ctx2, "ping", json.RawMessage(`[1]`)); err != nil || string(got) != `[1]` {
		t.Fatalf("Call after a cancellation = %s, %v", got, err)
	}
	if got, err := p.b.Call(ctx2, "ping", json.RawMessage(`[2]`)); err != nil || string(got) != `[2]` {
		t.Fatalf("reverse Call after a cancellation = %s, %v", got, err)
	}

	// Everything is written once both Serves (and so every handler) are done.
	p.close()
	aMsgs := frames(t, p.aOut.bytes())
	id := requestID(t, aMsgs, "block")
	cs := cancellations(aMsgs)
	if len(cs) != 1 || !bytes.Equal(cs[0].RequestID, id) || cs[0].Reason != "cancelled" {
		t.Errorf("cancellations sent = %+v, want one for request %s with reason \"cancelled\"", cs, id)
	}
	assertNoResponse(t, frames(t, p.bOut.bytes()), id)

	// notifications/cancelled is consumed by the Conn, not handed on.
	close(blk.notes)
	for n := range blk.notes {
		t.Errorf("handler received notification %q", n)
	}
}

func TestCallerDeadlineSaysTimedOut(t *testing.T) {
	leakCheck(t)
	blk := newBlocker()
	p := newPair(t, echo, blk.handler(), nil)

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	r := waitCall(t, goCall(p.a, ctx, "block", nil))
	if !errors.Is(r.err, context.DeadlineExceeded) {
		t.Fatalf("Call = %s, %v; want context.DeadlineExceeded", r.res, r.err)
	}
	if err := blk.waitEnded(t); !errors.Is(err, context.Canceled) {
		t.Errorf("peer handler ctx ended with %v, want context.Canceled", err)
	}

	p.close()
	aMsgs := frames(t, p.aOut.bytes())
	id := requestID(t, aMsgs, "block")
	cs := cancellations(aMsgs)
	if len(cs) != 1 || !bytes.Equal(cs[0].RequestID, id) || cs[0].Reason != "timed out" {
		t.Errorf("cancellations sent = %+v, want one for request %s with reason \"timed out\"", cs, id)
	}
	assertNoResponse(t, frames(t, p.bOut.bytes()), id)
}

func TestCallWithDoneContext(t *testing.T) {
	leakCheck(t)
	p := newPair(t, echo, echo, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// Either outcome is acceptable for an already-cancelled ctx as long as
	// Call returns; a cancellation then follows the request on the wire.
	_, err := p.a.Call(ctx, "ping", nil)
	if err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("Call with a done ctx = %v", err)
	}
	if got, err := p.a.Call(testCtx(t), "ping", json.RawMessage(`1`)); err != nil || string(got) != `1` {
		t.Errorf("Call afterwards = %s, %v", got, err)
	}
}

// The peer cancelling one of our handlers: driven from the raw stream so the
// absence of a response can be checked line by line.
func TestPeerCancellationFromRawStream(t *testing.T) {
	leakCheck(t)
	blk := newBlocker()
	p := newRawPeer(t, blk.handler(), nil)

	for _, id := range []string{`5`, `"abc"`} {
		// Whitespace around the id does not affect matching.
		p.send(`{"jsonrpc":"2.0","id" :  ` + id + ` ,"method":"block"}`)
		blk.waitStarted(t)
		// Cancellations for other ids, or without a usable id, change nothing.
		p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":999}}`)
		p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":null}}`)
		p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}`)
		p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":"junk"}`)
		p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled"}`)
		p.send(`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"still":"blocked"}}`)
		p.expectLine(`{"jsonrpc":"2.0","id":1,"result":{"still":"blocked"}}`)
		select {
		case err := <-blk.ended:
			t.Fatalf("handler %s ended (%v) on a cancellation for another request", id, err)
		default:
		}

		p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{ "requestId":	` + id + ` , "reason":"user"}}`)
		if err := blk.waitEnded(t); !errors.Is(err, context.Canceled) {
			t.Errorf("handler ctx ended with %v", err)
		}
		// The next line written is the answer to a later request, not a
		// response to the cancelled one.
		p.send(`{"jsonrpc":"2.0","id":2,"method":"echo","params":"next"}`)
		p.expectLine(`{"jsonrpc":"2.0","id":2,"result":"next"}`)
	}
	if err := p.close(); err != nil {
		t.Fatalf("Serve = %v", err)
	}
	for _, line := range p.rest() {
		t.Errorf("unexpected line after cancellation: %q", line)
	}
	close(blk.notes)
	for n := range blk.notes {
		t.Errorf("handler received notification %q", n)
	}
}

// --- the connection ending ------------------------------------------------

func TestPeerEndingFailsPendingCalls(t *testing.T) {
	leakCheck(t)
	blk := newBlocker()
	p := newPair(t, echo, blk.handler(), nil)

	const pending = 5
	ctx := testCtx(t)
	var calls []<-chan callResult
	for i := 0; i < pending; i++ {
		calls = append(calls, goCall(p.a, ctx, "block", nil))
	}
	for i := 0; i < pending; i++ {
		blk.waitStarted(t)
	}

	// b goes away: a reads EOF.
	p.baW.Close()
	if err := waitServe(t, p.aServe, "a"); err != nil {
		t.Errorf("a's Serve on a clean EOF = %v, want nil", err)
	}
	p.aServe <- nil // for p.close
	for i, ch := range calls {
		r := waitCall(t, ch)
		if !errors.Is(r.err, ErrClosed) {
			t.Errorf("pending call %d = %s, %v; want ErrClosed", i, r.res, r.err)
		}
	}
	waitClosed(t, p.a.Done(), "a's Done")
	if err := p.a.Err(); !errors.Is(err, ErrClosed) {
		t.Errorf("a.Err() = %v, want ErrClosed", err)
	}

	// A closed Conn fails fast.
	start := time.Now()
	if _, err := p.a.Call(ctx, "ping", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Call after close = %v, want ErrClosed", err)
	}
	if err := p.a.Notify("notifications/x", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Notify after close = %v, want ErrClosed", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("calls on a closed Conn took %v", d)
	}

	// b is still reading; its handlers are cancelled when its input ends.
	select {
	case <-p.b.Done():
		t.Fatal("b ended before its input did")
	default:
	}
	p.abW.Close()
	for i := 0; i < pending; i++ {
		if err := blk.waitEnded(t); !errors.Is(err, context.Canceled) {
			t.Errorf("b handler ctx ended with %v", err)
		}
	}
	if err := waitServe(t, p.bServe, "b"); err != nil {
		t.Errorf("b's Serve on a clean EOF = %v, want nil", err)
	}
	p.bServe <- nil
	if err := p.b.Err(); !errors.Is(err, ErrClosed) {
		t.Errorf("b.Err() = %v, want ErrClosed", err)
	}
}

// Serve returns only once every handler it started has returned, and those
// handlers see their ctx cancelled when the input ends.
func TestServeWaitsForHandlers(t *testing.T) {
	leakCheck(t)
	const n = 3
	started := make(chan struct{}, n)
	var returned atomic.Int32
	h := handlerFuncs{req: func(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, error) {
		started <- struct{}{}
		<-ctx.Done()
		time.Sleep(100 * time.Millisecond) // slow to wind down
		returned.Add(1)
		return nil, ctx.Err()
	}}
	p := newRawPeer(t, h, nil)
	for i := 1; i <= n; i++ {
		p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"work"}`, i))
	}
	for i := 0; i < n; i++ {
		select {
		case <-started:
		case <-time.After(waitLimit):
			t.Fatal("handler did not start")
		}
	}
	select {
	case <-p.c.Done():
		t.Fatal("Done closed while the input is open")
	default:
	}
	if err := p.close(); err != nil {
		t.Fatalf("Serve = %v", err)
	}
	if got := returned.Load(); got != n {
		t.Errorf("Serve returned while %d of %d handlers were still running", n-got, n)
	}
	waitClosed(t, p.c.Done(), "Done")
	// Handlers cut short by the end of the input still answer (the write may
	// or may not reach the peer); whatever was written is whole frames.
	for _, line := range p.rest() {
		var m wireMsg
		if err := json.Unmarshal(line, &m); err != nil {
			t.Errorf("partial line written: %q", line)
		}
	}
}

func TestReadErrorEndsConnection(t *testing.T) {
	leakCheck(t)
	p := newRawPeer(t, echo, nil)
	call := goCall(p.c, testCtx(t), "slow", nil)
	p.readRequest("slow")
	if err := p.c.Err(); err != nil {
		t.Errorf("Err() on an open Conn = %v, want nil", err)
	}

	boom := errors.New("stdout exploded")
	if err := p.closeWith(boom); !errors.Is(err, boom) {
		t.Errorf("Serve = %v, want the read error", err)
	}
	r := waitCall(t, call)
	if !errors.Is(r.err, ErrClosed) {
		t.Errorf("pending call = %v, want ErrClosed", r.err)
	}
	err := p.c.Err()
	if !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), "stdout exploded") {
		t.Errorf("Err() = %v, want ErrClosed carrying the read error's text", err)
	}
	if _, err := p.c.Call(context.Background(), "x", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Call after the end = %v, want ErrClosed", err)
	}
}

func TestLastLineWithoutNewlineIsServed(t *testing.T) {
	leakCheck(t)
	var got []string
	var mu sync.Mutex
	p := newRawPeer(t, handlerFuncs{notif: func(method string, _ json.RawMessage) {
		mu.Lock()
		got = append(got, method)
		mu.Unlock()
	}}, nil)
	if _, err := io.WriteString(p.in, `{"jsonrpc":"2.0","method":"a"}`+"\n"+`{"jsonrpc":"2.0","method":"b"}`); err != nil {
		t.Fatal(err)
	}
	if err := p.close(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(got, ",") != "a,b" {
		t.Errorf("notifications = %v, want [a b]", got)
	}
}

// --- framing and odd input ------------------------------------------------

func TestWireFormat(t *testing.T) {
	leakCheck(t)
	p := newRawPeer(t, echo, nil)
	ctx := testCtx(t)

	call := goCall(p.c, ctx, "tools/list", nil)
	p.expectLine(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	p.send(`{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`)
	if r := waitCall(t, call); r.err != nil || string(r.res) != `{"tools":[]}` {
		t.Errorf("Call = %s, %v", r.res, r.err)
	}

	call = goCall(p.c, ctx, "tools/call", json.RawMessage(`{"name":"x","arguments":{"n":12345678901234567890}}`))
	p.expectLine(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x","arguments":{"n":12345678901234567890}}}`)
	p.send(`{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"nope","data":{"why":"\u00e9"}}}`)
	r := waitCall(t, call)
	var rpcErr *Error
	if !errors.As(r.err, &rpcErr) || rpcErr.Code != -32602 || rpcErr.Message != "nope" || string(rpcErr.Data) != `{"why":"\u00e9"}` {
		t.Errorf("Call = %s, %v", r.res, r.err)
	}

	if err := p.c.Notify("notifications/initialized", nil); err != nil {
		t.Fatal(err)
	}
	p.expectLine(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if err := p.c.Notify("notifications/message", json.RawMessage(`{"level":"info"}`)); err != nil {
		t.Fatal(err)
	}
	p.expectLine(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info"}}`)

	// A method name needing escapes still makes valid JSON that round-trips.
	odd := "we\"ird\\name/ü\n\x01"
	if err := p.c.Notify(odd, nil); err != nil {
		t.Fatal(err)
	}
	var m wireMsg
	line := p.readLine()
	if err := json.Unmarshal(line, &m); err != nil || m.Method != odd || bytes.Count(line, []byte("\n")) != 1 {
		t.Errorf("odd method name framed as %q (%v)", line, err)
	}

	// Requests from the peer are answered with the id verbatim.
	p.send(`{"jsonrpc":"2.0","id":7,"method":"echo","params":{"a":[1,2]}}`)
	p.expectLine(`{"jsonrpc":"2.0","id":7,"result":{"a":[1,2]}}`)
	p.send(`{"jsonrpc":"2.0","id":8,"method":"nothing"}`)
	p.expectLine(`{"jsonrpc":"2.0","id":8,"result":{}}`)
}

func TestStringAndOddIDsAreEchoedVerbatim(t *testing.T) {
	leakCheck(t)
	hb := handlerFuncs{req: func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		if method == "fail" {
			return nil, Errorf(CodeInvalidParams, "bad")
		}
		return params, nil
	}}
	p := newRawPeer(t, hb, nil)
	for _, id := range []string{`"abc"`, `"1"`, `""`, `"caf\u00e9 \"q\""`, `12345678901234567890`, `-3`, `0`, `1.5`} {
		p.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"echo","params":{"k":"v"}}`)
		p.expectLine(`{"jsonrpc":"2.0","id":` + id + `,"result":{"k":"v"}}`)
		p.send(`{"jsonrpc":"2.0", "id" : ` + id + ` , "method":"fail"}`)
		p.expectLine(`{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32602,"message":"bad"}}`)
	}
}

// A message whose id is null is not a request. With a method it is handled as
// a notification (no response); without one it is ignored as garbage.
func TestNullID(t *testing.T) {
	leakCheck(t)
	var requests, notes []string
	var mu sync.Mutex
	h := handlerFuncs{
		req: func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
			mu.Lock()
			requests = append(requests, method)
			mu.Unlock()
			return params, nil
		},
		notif: func(method string, _ json.RawMessage) {
			mu.Lock()
			notes = append(notes, method)
			mu.Unlock()
		},
	}
	opts, logBuf := captureLog()
	p := newRawPeer(t, h, opts)
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
	mu.Lock()
	defer mu.Unlock()
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
	var requests, notes []string
	var mu sync.Mutex
	h := handlerFuncs{
		req: func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
			mu.Lock()
			requests = append(requests, method)
			mu.Unlock()
			return params, nil
		},
		notif: func(method string, _ json.RawMessage) {
			mu.Lock()
			notes = append(notes, method)
			mu.Unlock()
		},
	}
	opts, logBuf := captureLog()
	p := newRawPeer(t, h, opts)

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
	mu.Lock()
	if strings.Join(requests, ",") != "echo" || strings.Join(notes, ",") != "notifications/ok" {
		t.Errorf("handler saw requests %v and notifications %v; want [echo] and [notifications/ok]", requests, notes)
	}
	mu.Unlock()
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

func TestLargeSingleLineResult(t *testing.T) {
	leakCheck(t)
	const size = 20 << 20
	var b strings.Builder
	b.Grow(size + 64)
	b.WriteString(`{"blob":"`)
	chunk := `abc\u00e9\"<&>\\xyz 0123456789 `
	for b.Len() < size {
		b.WriteString(chunk)
	}
	b.WriteString(`","n":12345678901234567890}`)
	big := json.RawMessage(b.String())

	var gotParams atomic.Int64
	hb := handlerFuncs{req: func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		if method != "big" {
			return params, nil
		}
		gotParams.Store(int64(len(params)))
		if !bytes.Equal(params, big) {
			return nil, errors.New("params changed")
		}
		return big, nil
	}}
	p := newPair(t, echo, hb, nil)
	got, err := p.a.Call(testCtx(t), "big", big)
	if err != nil {
		t.Fatalf("Call: %v (handler saw %d bytes of %d)", err, gotParams.Load(), len(big))
	}
	if !bytes.Equal(got, big) {
		t.Fatalf("20 MB result changed: got %d bytes, want %d", len(got), len(big))
	}
	// Still framed: a small call after the big one works.
	if got, err := p.a.Call(testCtx(t), "small", json.RawMessage(`1`)); err != nil || string(got) != "1" {
		t.Errorf("Call after the big one = %s, %v", got, err)
	}
}

func TestPrettyPrintedRawIsCompacted(t *testing.T) {
	leakCheck(t)
	pretty := "{\n  \"a\": [\n    1,\n    2\n  ],\r\n  \"s\": \"x y\\n\",\n  \"n\": 12345678901234567890,\n  \"h\": \"<&>\"\n}\n"
	const compact = `{"a":[1,2],"s":"x y\n","n":12345678901234567890,"h":"<&>"}`
	var gotParams atomic.Value
	hb := handlerFuncs{req: func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		gotParams.Store(string(params))
		return json.RawMessage(pretty), nil
	}}
	var notes []string
	var mu sync.Mutex
	ha := handlerFuncs{notif: func(_ string, params json.RawMessage) {
		mu.Lock()
		notes = append(notes, string(params))
		mu.Unlock()
	}}
	p := newPair(t, ha, hb, nil)
	ctx := testCtx(t)
	for i := 0; i < 3; i++ {
		got, err := p.a.Call(ctx, "pretty", json.RawMessage(pretty))
		if err != nil {
			t.Fatalf("Call: %v", err)
		}
		if string(got) != compact {
			t.Errorf("result = %q, want %q", got, compact)
		}
		if s, _ := gotParams.Load().(string); s != compact {
			t.Errorf("params = %q, want %q", s, compact)
		}
	}
	if err := p.b.Notify("n", json.RawMessage(pretty)); err != nil {
		t.Fatal(err)
	}
	p.close()
	mu.Lock()
	if len(notes) != 1 || notes[0] != compact {
		t.Errorf("notification params = %q, want [%q]", notes, compact)
	}
	mu.Unlock()
	// One message per line on both streams (frames fails otherwise).
	if a := frames(t, p.aOut.bytes()); len(a) != 3 {
		t.Errorf("a wrote %d lines, want 3", len(a))
	}
	if b := frames(t, p.bOut.bytes()); len(b) != 4 {
		t.Errorf("b wrote %d lines, want 4", len(b))
	}
}

// A handler that returns multi-line bytes that are not JSON cannot break the
// framing: the value is replaced by null.
func TestInvalidMultiLineResultKeepsFraming(t *testing.T) {
	leakCheck(t)
	hb := handlerFuncs{req: func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage("{\n\"a\": oops\n}"), nil
	}}
	p := newPair(t, echo, hb, nil)
	got, err := p.a.Call(testCtx(t), "x", nil)
	if err != nil || string(got) != "null" {
		t.Errorf("Call = %q, %v; want null", got, err)
	}
	if got, err := p.a.Call(testCtx(t), "x", nil); err != nil || string(got) != "null" {
		t.Errorf("second Call = %q, %v; want null", got, err)
	}
}

// chunkWriter passes each Write on in small pieces, yielding between them,
// as a write to a real pipe or socket may be split. Concurrent unsynchronised
// writers would interleave their frames.
type chunkWriter struct{ w io.Writer }

func (c chunkWriter) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		n := min(len(p), 4096)
		m, err := c.w.Write(p[:n])
		written += m
		if err != nil {
			return written, err
		}
		p = p[n:]
		runtime.Gosched()
	}
	return written, nil
}

// Writes to the stream never interleave, even with many writers, large
// frames and a writer that splits them.
func TestConcurrentWritesAreWholeFrames(t *testing.T) {
	leakCheck(t)
	var count, bad atomic.Int32
	const senders, each = 10, 20
	done := make(chan struct{})
	hb := handlerFuncs{notif: func(method string, params json.RawMessage) {
		if method != "n" || len(params) != 70_000+len(`""`) {
			bad.Add(1)
		}
		if count.Add(1) == senders*each {
			close(done)
		}
	}}
	p := newPairWrapped(t, echo, hb, nil, func(w io.Writer) io.Writer { return chunkWriter{w} })
	payload := json.RawMessage(`"` + strings.Repeat("p", 70_000) + `"`)
	var wg sync.WaitGroup
	for i := 0; i < senders; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < each; j++ {
				if err := p.a.Notify("n", payload); err != nil {
					t.Errorf("Notify: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	waitClosed(t, done, "every notification")
	if n := bad.Load(); n > 0 {
		t.Errorf("%d notifications arrived truncated or merged", n)
	}
	p.close()
	if n := len(frames(t, p.aOut.bytes())); n != senders*each {
		t.Errorf("%d frames on the wire, want %d", n, senders*each)
	}
}

func TestNilOptionsAndDoneOpen(t *testing.T) {
	leakCheck(t)
	p := newPair(t, echo, echo, &Options{})
	select {
	case <-p.a.Done():
		t.Fatal("Done closed on an open Conn")
	default:
	}
	if err := p.a.Err(); err != nil {
		t.Errorf("Err() on an open Conn = %v", err)
	}
	if got, err := p.a.Call(testCtx(t), "x", json.RawMessage(`{}`)); err != nil || string(got) != "{}" {
		t.Errorf("Call = %s, %v", got, err)
	}
}
