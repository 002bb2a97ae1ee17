package jsonrpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcptrunk/mcptrunk/internal/testkit"
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

// handlerFuncs adapts funcs to Handler: whole, the Request as given, when
// set, else req with its method and params. With neither it answers
// method not found; a nil notif drops notifications.
type handlerFuncs struct {
	req   func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
	whole func(ctx context.Context, req Request) (json.RawMessage, error)
	notif func(method string, params json.RawMessage)
}

func (h handlerFuncs) HandleRequest(ctx context.Context, req Request) (json.RawMessage, error) {
	switch {
	case h.whole != nil:
		return h.whole(ctx, req)
	case h.req != nil:
		return h.req(ctx, req.Method, req.Params)
	}
	return nil, Errorf(CodeMethodNotFound, "method %q not found", req.Method)
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
	p.a = NewConn(NewLineReader(baR), NewLineWriter(p.aOut), ha, opts)
	p.b = NewConn(NewLineReader(abR), NewLineWriter(p.bOut), hb, opts)
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
	p.c = NewConn(NewLineReader(inR), NewLineWriter(outW), h, opts)
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

// captureLog returns Options whose Logger writes, at debug level, to a
// buffer the test can read while the Conn writes.
func captureLog() (*Options, *testkit.Buffer) {
	buf := &testkit.Buffer{}
	logger := slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return &Options{Logger: logger}, buf
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
