package remote

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/httpx"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/logkey"
	"github.com/mcptrunk/mcptrunk/upstream/oauth"
)

// The HTTP transports (streamable HTTP in http.go, legacy HTTP+SSE in
// sse.go) share the machinery in this file. Everything protocol-level (ids,
// pending calls, cancellation, the server's own requests and notifications)
// is jsonrpc.Conn's, exactly as for stdio; the transports only move frames:
//
//	Conn --Write(frame)--> frameQueue --dispatcher--> POST (one goroutine per request)
//	Conn <--lines-- io.Pipe <-- JSON bodies, SSE events of POST replies and of the GET stream
//
// Conn writes each frame with one Write call under its write lock, so Write
// never touches the network: it copies the frame into an unbounded queue. A
// dispatcher goroutine takes frames in order. A request is POSTed on a
// goroutine of its own (its reply can stream for as long as the call runs);
// a notification or a response is POSTed by the dispatcher itself before it
// takes the next frame, so notifications/initialized reaches the server
// before the requests that follow it, and notifications/cancelled before the
// request's POST is abandoned.
//
// A request whose POST fails at the HTTP level (connection refused, 401,
// 5xx, a reply without an answer) gets a synthesized JSON-RPC error response
// fed into the pipe, so its Call fails at once; Call turns that back into a
// plain error (see transportError) so the Client reports it like any other
// connection failure and never mistakes it for an answer from the server.

// HTTP tuning. Variables so tests can shorten them.
var (
	// httpNotifyTimeout bounds the POST of a notification or a response (the
	// server's connect timeout, when shorter, bounds it instead).
	httpNotifyTimeout = 10 * time.Second
	// httpDeleteTimeout bounds the DELETE that ends a session at Close.
	httpDeleteTimeout = 2 * time.Second
	// ListenRetryMin and listenRetryMax bound the backoff between attempts
	// to (re)open the standalone GET stream.
	ListenRetryMin = 500 * time.Millisecond
	listenRetryMax = 30 * time.Second
	// sseResumeAttempts is how many times in a row a reply stream the server
	// ended before answering is resumed without it delivering anything.
	sseResumeAttempts = 5
)

// errorBodyLimit is how much of an error reply is read for its message.
const errorBodyLimit = 64 << 10

// transportMarker is the data of a synthesized error response: it tells Call
// that the error is the transport's, not the server's.
var transportMarker = json.RawMessage(`{"mcptrunk":"transport"}`)

// transportError is how a request that never got an answer from the server
// (the HTTP exchange failed) ends. It is deliberately not a *jsonrpc.Error:
// callers (start-up, health pings, call routing) treat a JSON-RPC error as
// proof that the server answered.
type transportError struct{ msg string }

func (e *transportError) Error() string { return e.msg }

// frameKind is what a frame written by Conn is.
type frameKind int

const (
	frameRequest frameKind = iota
	frameNotification
	frameResponse
)

// frame is one message Conn wrote, with its envelope parsed once.
type frame struct {
	body     []byte
	kind     frameKind
	id       json.RawMessage // request or response id
	method   string
	params   json.RawMessage
	cancelID string // notifications/cancelled: normalised id of the request it cancels
}

func parseFrame(body []byte) frame {
	f := frame{body: body}
	var env struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		f.kind = frameNotification // unknown: sent in order, no reply awaited
		return f
	}
	f.id, f.method, f.params = env.ID, env.Method, env.Params
	switch {
	case env.Method != "" && rawHasID(env.ID):
		f.kind = frameRequest
	case env.Method != "":
		f.kind = frameNotification
		if env.Method == "notifications/cancelled" {
			var p struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			if json.Unmarshal(env.Params, &p) == nil {
				f.cancelID = normID(p.RequestID)
			}
		}
	default:
		f.kind = frameResponse
	}
	return f
}

func rawHasID(id json.RawMessage) bool {
	return len(id) > 0 && !bytes.Equal(id, []byte("null"))
}

// normID makes ids comparable: Conn sends numbers, and also accepts them
// back as strings.
func normID(id json.RawMessage) string {
	return string(bytes.Trim(bytes.TrimSpace(id), `"`))
}

// envelope is the part of an incoming message the transports look at.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *jsonrpc.Error  `json:"error"`
}

func (e *envelope) isResponse() bool { return e.Method == "" && rawHasID(e.ID) }

// frameQueue is an unbounded FIFO of frames: push never blocks.
type frameQueue struct {
	mu     sync.Mutex
	frames []frame
	closed bool
	wake   chan struct{}
}

func newFrameQueue() *frameQueue { return &frameQueue{wake: make(chan struct{}, 1)} }

func (q *frameQueue) push(f frame) bool {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	q.frames = append(q.frames, f)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return true
}

// pop waits for the next frame; false once the queue is closed or ctx ends.
func (q *frameQueue) pop(ctx context.Context) (frame, bool) {
	for {
		q.mu.Lock()
		if q.closed {
			q.mu.Unlock()
			return frame{}, false
		}
		if len(q.frames) > 0 {
			f := q.frames[0]
			q.frames[0] = frame{}
			q.frames = q.frames[1:]
			q.mu.Unlock()
			return f, true
		}
		q.mu.Unlock()
		select {
		case <-q.wake:
		case <-ctx.Done():
			return frame{}, false
		}
	}
}

func (q *frameQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.frames = nil
	q.mu.Unlock()
}

// frameSender is what differs between the two HTTP transports.
type frameSender interface {
	// ready waits until frames can be sent (SSE: the endpoint is known).
	ready(ctx context.Context) error
	// sendRequest POSTs a request and sees that its Call ends: with the
	// server's answer, or with a synthesized error. ctx ends when the
	// caller cancelled the request or the transport closes.
	sendRequest(ctx context.Context, f frame)
	// sendOther POSTs a notification or a response.
	sendOther(ctx context.Context, f frame) error
}

// httpPeer is the part both HTTP transports share: the Conn, the pipe that
// feeds it, the outgoing queue and its dispatcher, the HTTP client, and the
// lifecycle.
type httpPeer struct {
	// fixed at creation
	name      string // the server's id, for messages
	kind      string // "streamable HTTP" or "SSE", for messages
	logger    *slog.Logger
	client    *http.Client
	transport *http.Transport
	headers   http.Header // from the config, canonicalised
	hostHdr   string      // a "Host" entry of the config's headers
	secrets   []string    // header values, scrubbed from anything quoted
	origin    *url.URL    // scheme and host of the configured URL
	connectTO time.Duration
	conn      *jsonrpc.Conn
	auth      *oauth.Source // OAuth; nil when the config sets an Authorization header
	pr        *io.PipeReader
	pw        *io.PipeWriter
	queue     *frameQueue
	sender    frameSender
	life      context.Context // ends at Close or when the connection fails
	stop      context.CancelFunc
	done      chan struct{} // closed when Conn has ended
	workers   sync.WaitGroup

	inMu      sync.Mutex // one line at a time into pw
	closeOnce sync.Once

	mu       sync.Mutex
	err      error                         // why the connection failed (nil until then, or after a plain Close)
	closing  bool                          // Close was called
	inflight map[string]context.CancelFunc // request POSTs, by normalised id
}

func newHTTPPeer(spec config.Spec, name, kind string, h jsonrpc.Handler, logger *slog.Logger, userAgent string) (*httpPeer, error) {
	u, err := url.Parse(spec.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// Never quote the URL: it may carry a secret.
		return nil, errors.New("url: must be an absolute http:// or https:// URL")
	}
	p := &httpPeer{
		name:      name,
		kind:      kind,
		logger:    logger,
		headers:   http.Header{},
		origin:    &url.URL{Scheme: u.Scheme, Host: u.Host},
		connectTO: spec.Timeouts.Connect.D(),
		queue:     newFrameQueue(),
		done:      make(chan struct{}),
		inflight:  map[string]context.CancelFunc{},
	}
	names := make([]string, 0, len(spec.Headers))
	for k, v := range spec.Headers {
		names = append(names, k)
		if strings.EqualFold(k, "Host") {
			p.hostHdr = v
		} else {
			p.headers.Set(k, v)
		}
		p.secrets = append(p.secrets, secretParts(v)...)
	}
	sort.Strings(names)
	if p.headers.Get("User-Agent") == "" {
		p.headers.Set("User-Agent", strings.TrimSuffix(userAgent, "/"))
	}

	base, _ := http.DefaultTransport.(*http.Transport)
	if base != nil {
		p.transport = base.Clone()
	} else {
		p.transport = &http.Transport{Proxy: http.ProxyFromEnvironment}
	}
	p.transport.MaxIdleConnsPerHost = 16
	p.client = &http.Client{
		Transport: p.transport,
		// Follow redirects only within the configured origin: the trunk
		// connects to what the config says and nowhere else.
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return errors.New("too many redirects")
			}
			if req.URL.Scheme != p.origin.Scheme || req.URL.Host != p.origin.Host {
				return fmt.Errorf("refusing a redirect to another origin (%s)", req.URL.Host)
			}
			return nil
		},
	}

	p.auth = oauth.NewSource(spec, name, logger, p.transport)

	p.life, p.stop = context.WithCancel(context.Background())
	p.pr, p.pw = io.Pipe()
	p.conn = jsonrpc.NewConn(p.pr, p, h, &jsonrpc.Options{Logger: logger})
	logger.Debug("connecting", "transport", kind, "origin", p.origin.String(), "headers", names)
	return p, nil
}

// secretParts returns what must never be quoted from a header value: the
// value, and each long word in it (the token of "Bearer <token>").
func secretParts(v string) []string {
	var out []string
	if len(v) >= 4 {
		out = append(out, v)
	}
	for _, w := range strings.Fields(v) {
		if len(w) >= 8 && w != v {
			out = append(out, w)
		}
	}
	return out
}

// start runs the Conn and the dispatcher.
func (p *httpPeer) start(sender frameSender) {
	p.sender = sender
	p.workers.Add(2)
	go func() {
		defer p.workers.Done()
		if err := p.conn.Serve(); err != nil {
			p.logger.Debug("reading from server ended", logkey.Error, err)
		}
		close(p.done)
	}()
	go func() {
		defer p.workers.Done()
		p.dispatch()
	}()
}

// Write is Conn's writer: it queues a copy of the frame and returns.
func (p *httpPeer) Write(b []byte) (int, error) {
	if !p.queue.push(parseFrame(bytes.Clone(b))) {
		return 0, jsonrpc.ErrClosed
	}
	return len(b), nil
}

func (p *httpPeer) dispatch() {
	for {
		f, ok := p.queue.pop(p.life)
		if !ok {
			return
		}
		if err := p.sender.ready(p.life); err != nil {
			return
		}
		if f.kind == frameRequest {
			p.goRequest(f)
			continue
		}
		// Bounded: later frames wait behind this one.
		timeout := httpNotifyTimeout
		if p.connectTO > 0 && p.connectTO < timeout {
			timeout = p.connectTO
		}
		ctx, cancel := context.WithTimeout(p.life, timeout)
		err := p.sender.sendOther(ctx, f)
		cancel()
		if err != nil && p.life.Err() == nil {
			what := f.method
			if what == "" {
				what = "a response"
			}
			p.logger.Warn("sending to the server failed", "message", what, logkey.Error, err)
		}
		if f.cancelID != "" {
			// The server has been told (or could not be); now stop waiting
			// for the cancelled request's reply.
			p.mu.Lock()
			cancel := p.inflight[f.cancelID]
			p.mu.Unlock()
			if cancel != nil {
				cancel()
			}
		}
	}
}

// goRequest starts a request's POST on a goroutine of its own, with a ctx
// that ends when the caller cancels it or the transport closes.
func (p *httpPeer) goRequest(f frame) {
	ctx, cancel := context.WithCancel(p.life)
	key := normID(f.id)
	p.mu.Lock()
	p.inflight[key] = cancel
	p.mu.Unlock()
	p.workers.Add(1)
	go func() {
		defer p.workers.Done()
		defer func() {
			cancel()
			p.mu.Lock()
			delete(p.inflight, key)
			p.mu.Unlock()
		}()
		p.sender.sendRequest(ctx, f)
	}()
}

// goWorker runs fn on a goroutine the transport waits for at Close; false
// (and fn not run) once the transport is closing.
func (p *httpPeer) goWorker(fn func()) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closing || p.life.Err() != nil {
		return false
	}
	p.workers.Add(1)
	go func() {
		defer p.workers.Done()
		fn()
	}()
	return true
}

// deliver feeds one message (or a batch) from the server to Conn.
func (p *httpPeer) deliver(msg []byte) {
	msg = bytes.TrimSpace(msg)
	if len(msg) == 0 {
		return
	}
	if msg[0] == '[' {
		var batch []json.RawMessage
		if err := json.Unmarshal(msg, &batch); err == nil {
			for _, m := range batch {
				p.deliver(m)
			}
			return
		}
	}
	line := oneLine(msg)
	p.inMu.Lock()
	_, err := p.pw.Write(line)
	p.inMu.Unlock()
	if err != nil && p.life.Err() == nil {
		p.logger.Debug("delivering a message failed", logkey.Error, err)
	}
}

// oneLine returns msg as one line ending in a newline, compacting JSON that
// spans lines.
func oneLine(msg []byte) []byte {
	if bytes.IndexByte(msg, '\n') >= 0 || bytes.IndexByte(msg, '\r') >= 0 {
		var buf bytes.Buffer
		if err := json.Compact(&buf, msg); err == nil {
			msg = buf.Bytes()
		} else {
			// Not JSON: keep the stream framed; Conn reports it.
			msg = bytes.ReplaceAll(bytes.ReplaceAll(msg, []byte("\r"), []byte(" ")), []byte("\n"), []byte(" "))
		}
	}
	out := make([]byte, 0, len(msg)+1)
	out = append(out, msg...)
	return append(out, '\n')
}

// failRequest ends the Call waiting on id with err, unless ctx has ended
// (the caller gave up, or the transport is closing).
func (p *httpPeer) failRequest(ctx context.Context, id json.RawMessage, err error) {
	if ctx.Err() != nil {
		return
	}
	p.logger.Debug("request failed in transport", logkey.Error, err)
	e := &jsonrpc.Error{Code: jsonrpc.CodeUnavailable, Message: p.scrub(err.Error()), Data: transportMarker}
	enc, mErr := json.Marshal(e)
	if mErr != nil {
		return
	}
	line := make([]byte, 0, len(enc)+len(id)+32)
	line = append(line, `{"jsonrpc":"2.0","id":`...)
	line = append(line, id...)
	line = append(line, `,"error":`...)
	line = append(line, enc...)
	line = append(line, '}')
	p.deliver(line)
}

// call is Call for both transports: Conn's call, with a synthesized
// transport error turned back into a plain error.
func (p *httpPeer) call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	res, err := p.conn.Call(ctx, method, params)
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) && bytes.Equal(rpcErr.Data, transportMarker) {
		return nil, &transportError{msg: rpcErr.Message}
	}
	return res, err
}

// fail ends the connection because it is unusable: pending and later calls
// fail, and Done closes once Conn has ended. The first reason is kept.
func (p *httpPeer) fail(err error) {
	p.mu.Lock()
	if p.closing || p.err != nil {
		p.mu.Unlock()
		return
	}
	p.err = err
	p.mu.Unlock()
	p.logger.Warn("connection lost", "transport", p.kind, logkey.Error, err)
	p.queue.close()
	p.stop()
	_ = p.pw.Close()
}

// Err says why the connection ended (nil while it is open).
func (p *httpPeer) Err() error {
	select {
	case <-p.done:
	default:
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return p.err
	}
	return jsonrpc.ErrClosed
}

func (p *httpPeer) Done() <-chan struct{} { return p.done }

// beginClose marks the transport closing: no new workers start.
func (p *httpPeer) beginClose() {
	p.mu.Lock()
	p.closing = true
	p.mu.Unlock()
}

// shutdown ends everything: every HTTP exchange is cancelled, Conn ends
// (failing pending calls), and every goroutine is waited for.
func (p *httpPeer) shutdown() {
	p.queue.close()
	p.stop()
	_ = p.pw.Close()
	p.workers.Wait()
	_ = p.pr.Close()
	p.transport.CloseIdleConnections()
}

// newRequest builds a request with the configured headers.
func (p *httpPeer) newRequest(ctx context.Context, method, target string, body []byte) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return nil, errors.New("building the request failed")
	}
	for k, v := range p.headers {
		req.Header[k] = v
	}
	if p.hostHdr != "" {
		req.Host = p.hostHdr
	}
	return req, nil
}

// do sends req, with the OAuth token when the server uses OAuth (see
// doAuthorized).
func (p *httpPeer) do(req *http.Request) (*http.Response, error) {
	if p.auth != nil {
		return p.doAuthorized(req)
	}
	return p.send(req)
}

// send sends req, turning a failure into an error that names what happened
// without quoting the URL (it may carry a secret).
func (p *httpPeer) send(req *http.Request) (*http.Response, error) {
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, p.netError(err)
	}
	return resp, nil
}

func (p *httpPeer) netError(err error) error {
	var uErr *url.Error
	if errors.As(err, &uErr) {
		err = uErr.Err
	}
	var errno syscall.Errno
	switch {
	case errors.As(err, &errno) && (errno == syscall.ECONNREFUSED || errno == 10061): // 10061: WSAECONNREFUSED
		return fmt.Errorf("cannot connect to %s: connection refused (is the server running?)", p.origin.Host)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return fmt.Errorf("cannot resolve %s: %v", dnsErr.Name, dnsErr.Err)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) {
		return fmt.Errorf("the connection to %s was lost: %v", p.origin.Host, err)
	}
	return fmt.Errorf("cannot reach %s: %v", p.origin.Host, err)
}

// statusError describes an HTTP error status, with a hint at the cause and
// what the server said about it (scrubbed of the configured header values).
func (p *httpPeer) statusError(resp *http.Response, body []byte, initialize bool) error {
	code := resp.StatusCode
	msg := fmt.Sprintf("HTTP %d %s", code, http.StatusText(code))
	if hint := statusHint(code, initialize, p.kind); hint != "" {
		msg += ": " + hint
	}
	if detail := p.scrub(bodyDetail(body)); detail != "" {
		msg += fmt.Sprintf(" (server said: %q)", detail)
	}
	return errors.New(msg)
}

func statusHint(code int, initialize bool, kind string) string {
	switch {
	case code == http.StatusUnauthorized:
		return "check its headers/token"
	case code == http.StatusForbidden:
		return "access denied: check its headers/token and what they allow"
	case (code == http.StatusNotFound || code == http.StatusMethodNotAllowed) && initialize && kind == kindStreamable:
		return `check its url; a server that only speaks the older HTTP+SSE transport needs "type": "sse"`
	case code == http.StatusNotFound:
		return "check its url"
	case code == http.StatusMethodNotAllowed:
		return "check its url and type"
	case code == http.StatusRequestTimeout, code == http.StatusTooManyRequests:
		return "the server is busy or rate-limiting; try again later"
	case code == http.StatusBadGateway, code == http.StatusServiceUnavailable, code == http.StatusGatewayTimeout:
		return "the server, or a gateway in front of it, is unavailable"
	case code >= 500:
		return "the server failed"
	case code >= 400:
		return "the server rejected the request"
	}
	return "unexpected status"
}

// bodyDetail extracts a short message from an error body: a JSON-RPC
// error's message, a JSON "error"/"message" string, or the first line of
// text.
func bodyDetail(body []byte) string {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return ""
	}
	if body[0] == '{' {
		var v struct {
			Error   json.RawMessage `json:"error"`
			Message string          `json:"message"`
		}
		if json.Unmarshal(body, &v) == nil {
			var e struct {
				Message string `json:"message"`
			}
			var s string
			switch {
			case json.Unmarshal(v.Error, &e) == nil && e.Message != "":
				return httpx.Clip(e.Message)
			case json.Unmarshal(v.Error, &s) == nil && s != "":
				return httpx.Clip(s)
			case v.Message != "":
				return httpx.Clip(v.Message)
			}
		}
	}
	line, _, _ := bytes.Cut(body, []byte("\n"))
	return httpx.Clip(string(line))
}

// scrub removes the configured header values (and OAuth tokens) from s.
func (p *httpPeer) scrub(s string) string {
	for _, v := range p.secrets {
		s = strings.ReplaceAll(s, v, "[redacted]")
	}
	if p.auth != nil {
		s = p.auth.Scrub(s)
	}
	return s
}

// sseEvent is one dispatched server-sent event.
type sseEvent struct {
	name     string
	data     []byte
	id       string
	hasID    bool // the event (or one before it since the last dispatch) set the id
	retry    time.Duration
	hasRetry bool
}

// readSSE reads server-sent events from r and calls fn for each, until fn
// returns false, the stream ends (nil) or reading fails. An event whose
// data is empty is still reported, for its id (a server primes a client for
// resumption that way). An unfinished event at the end is discarded, as the
// SSE specification says.
func readSSE(r io.Reader, fn func(sseEvent) bool) error {
	br := bufio.NewReaderSize(r, 32<<10)
	var (
		ev      sseEvent
		data    []byte
		hasData bool
	)
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			if hasData || ev.hasID {
				if hasData {
					ev.data = bytes.TrimSuffix(data, []byte("\n"))
				}
				if ev.name == "" {
					ev.name = "message"
				}
				if !fn(ev) {
					return nil
				}
			}
			ev, data, hasData = sseEvent{}, nil, false
			continue
		}
		if line[0] == ':' {
			continue // comment (keep-alive)
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			ev.name = string(value)
		case "data":
			data = append(data, value...)
			data = append(data, '\n')
			hasData = true
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				ev.id, ev.hasID = string(value), true
			}
		case "retry":
			if ms, err := strconv.ParseUint(string(value), 10, 31); err == nil {
				ev.retry, ev.hasRetry = time.Duration(ms)*time.Millisecond, true
			}
		}
	}
}

// sseCursor is what a reader of a stream remembers to resume it.
type sseCursor struct {
	lastID string
	retry  time.Duration
}

func (c *sseCursor) note(ev sseEvent) {
	if ev.hasID {
		c.lastID = ev.id
	}
	if ev.hasRetry {
		c.retry = ev.retry
	}
}

// readReply reads the messages in a reply body, JSON or an event stream,
// and calls fn for each until fn returns false. cur, when not nil, tracks
// the stream's event ids.
func readReply(resp *http.Response, cur *sseCursor, fn func(msg []byte) bool) error {
	switch httpx.MediaType(resp) {
	case "text/event-stream":
		return readSSE(resp.Body, func(ev sseEvent) bool {
			if cur != nil {
				cur.note(ev)
			}
			if ev.name != "message" || len(bytes.TrimSpace(ev.data)) == 0 {
				return true
			}
			return fn(ev.data)
		})
	case "application/json":
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		body = bytes.TrimSpace(body)
		if len(body) == 0 {
			return nil
		}
		if body[0] == '[' {
			var batch []json.RawMessage
			if err := json.Unmarshal(body, &batch); err != nil {
				return &replyFormatError{fmt.Sprintf("the reply is not valid JSON: %v", err)}
			}
			for _, m := range batch {
				if !fn(m) {
					return nil
				}
			}
			return nil
		}
		fn(body)
		return nil
	case "":
		// No body to speak of (a 202 without Content-Type).
		return nil
	default:
		return &replyFormatError{fmt.Sprintf("unexpected content type %q in the reply", resp.Header.Get("Content-Type"))}
	}
}

// replyFormatError is a reply the transport cannot read, as opposed to one
// it could not receive.
type replyFormatError struct{ msg string }

func (e *replyFormatError) Error() string { return e.msg }

// readError describes a failure while reading a reply.
func (p *httpPeer) readError(err error) error {
	var fe *replyFormatError
	switch {
	case errors.As(err, &fe):
		return err
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET):
		return fmt.Errorf("the connection to %s was lost while reading the reply: %v", p.origin.Host, err)
	}
	return fmt.Errorf("reading the reply failed: %v", err)
}

const (
	kindStreamable = "streamable HTTP"
	kindSSE        = "SSE"
)
