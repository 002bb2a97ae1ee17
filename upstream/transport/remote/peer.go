package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/gopool"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/logkey"
	"github.com/mcptrunk/mcptrunk/upstream/oauth"
)

// The HTTP transports (streamable HTTP in streamable.go, legacy HTTP+SSE in
// sse.go) share the machinery in this file (frames in frame.go, replies and
// event streams in events.go, error messages in errors.go). Everything
// protocol-level (ids, pending calls, cancellation, the server's own requests
// and notifications) is jsonrpc.Conn's, exactly as for stdio; the transports
// only move frames:
//
//	Conn --WriteMessage(frame)--> frameQueue --dispatcher--> POST (a request: on a goroutine of its own)
//	Conn --CallExchange--> POST on the caller's goroutine (a request with nothing queued before it)
//	Conn <--Deliver-- JSON bodies, SSE events of POST replies and of the GET stream
//
// Conn writes each frame with one call under its write lock, so
// WriteMessage never touches the network: it copies the frame into an
// unbounded queue. A dispatcher goroutine takes frames in order. A request
// is POSTed on a goroutine of its own (its reply can stream for as long as
// the call runs); a notification or a response is POSTed by the dispatcher
// itself before it takes the next frame, so notifications/initialized
// reaches the server before the requests that follow it, and
// notifications/cancelled before the request's POST is abandoned.
//
// A request with nothing queued before it skips the queue (streamable HTTP:
// call): its caller POSTs it itself and reads the reply, which hands the
// answer to Conn before the caller looks for it, as httputil.ReverseProxy's
// handler waits on its own round trip. The dispatcher, a request goroutine
// and the answer's wake-up of the caller would each be a goroutine hand-off
// on every call. Cancelling such a call aborts its POST first; the server
// is then told, as the specification asks of a client (a disconnection is
// no cancellation).
//
// A request whose POST fails at the HTTP level (connection refused, 401,
// 5xx, a reply without an answer) gets a synthesized JSON-RPC error response
// fed into the pipe, so its Call fails at once; Call turns that back into a
// plain error (see transportError) so the Client reports it like any other
// connection failure and never mistakes it for an answer from the server.

// The transports' names, for messages.
const (
	kindStreamable = "streamable HTTP"
	kindSSE        = "SSE"
)

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

// httpPeer is the part both HTTP transports share: the Conn, the outgoing
// queue and its dispatcher, the HTTP client, and the lifecycle.
type httpPeer struct {
	// fixed at creation
	name       string // the server's id, for messages
	kind       string // "streamable HTTP" or "SSE", for messages
	logger     *slog.Logger
	client     *http.Client
	transport  *http.Transport
	headers    http.Header // from the config, canonicalised
	hostHdr    string      // a "Host" entry of the config's headers
	secrets    []string    // header values, scrubbed from anything quoted
	origin     *url.URL    // scheme and host of the configured URL
	connectTO  time.Duration
	maxMessage int // the longest message read from the server (0: no limit)
	conn       *jsonrpc.Conn
	auth       *oauth.Source // OAuth; nil when the config sets an Authorization header
	caller     *callerAuth   // Endpoint.Authorization; nil without one (and then OAuth may apply)
	queue      *frameQueue
	sender     frameSender
	exchange   bool            // a request with nothing queued before it is POSTed by its caller (callExchange)
	life       context.Context // ends at Close or when the connection fails
	stop       context.CancelFunc
	done       chan struct{} // closed when Conn has ended
	workers    sync.WaitGroup
	requests   *gopool.Pool // the goroutines requests' POSTs run on (goRequest), counted in workers

	closeOnce sync.Once

	mu       sync.Mutex
	err      error                         // why the connection failed (nil until then, or after a plain Close)
	closing  bool                          // Close was called
	inflight map[string]context.CancelFunc // request POSTs, by normalised id
}

// connOpts's read limit bounds each message the server sends (maxMessage);
// the Conn itself reads what the event and body readers let through.
func newHTTPPeer(e Endpoint, kind string, h jsonrpc.Handler, logger *slog.Logger, connOpts jsonrpc.Options) (*httpPeer, error) {
	u, err := url.Parse(e.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// Never quote the URL: it may carry a secret.
		return nil, errors.New("url: must be an absolute http:// or https:// URL")
	}
	p := &httpPeer{
		name:       e.ID,
		kind:       kind,
		logger:     logger,
		headers:    http.Header{},
		origin:     &url.URL{Scheme: u.Scheme, Host: u.Host},
		connectTO:  e.ConnectTimeout,
		maxMessage: connOpts.MaxReadBytes,
		queue:      newFrameQueue(),
		done:       make(chan struct{}),
		inflight:   map[string]context.CancelFunc{},
	}
	names := make([]string, 0, len(e.Headers))
	for k, v := range e.Headers {
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
		p.headers.Set("User-Agent", strings.TrimSuffix(e.UserAgent, "/"))
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

	if e.Authorization != nil {
		p.caller = &callerAuth{get: e.Authorization}
	} else {
		p.auth = oauth.NewSource(e.OAuth, e.ID, logger, p.transport)
	}

	p.life, p.stop = context.WithCancel(context.Background())
	p.requests = gopool.New(p.life.Done(), &p.workers)
	p.conn = jsonrpc.NewConn(untilDone(p.life.Done()), p, h, &jsonrpc.Options{Logger: logger})
	logger.Debug("connecting", "transport", kind, "origin", p.origin.String(), "headers", names)
	return p, nil
}

// untilDone is the Conn's reader: every message reaches the Conn through
// Deliver, so it gives none, and ends the Conn's input once the transport's
// life ends (Close, or a failed connection).
type untilDone <-chan struct{}

func (d untilDone) ReadMessage() ([]byte, error) {
	<-d
	return nil, io.EOF
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

// WriteMessage is Conn's writer: it queues a copy of the message and
// returns.
func (p *httpPeer) WriteMessage(msg []byte) error {
	if !p.queue.push(parseFrame(bytes.Clone(msg))) {
		return jsonrpc.ErrClosed
	}
	return nil
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
			p.queue.handed()
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
		p.queue.handed()
	}
}

// closeFlushMax bounds how long Close waits for queued notifications.
var closeFlushMax = time.Second

// flush gives the dispatcher a moment to send what is queued before the
// transport closes: the notifications/cancelled of the requests the Client
// ended on its way out (a subscriptions/listen stream a server would
// otherwise hold open for a client that is gone).
func (p *httpPeer) flush(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, closeFlushMax)
	defer cancel()
	p.queue.drain(ctx, p.life.Done())
}

// goRequest starts a request's POST on a goroutine of its own (a kept one,
// whose stack has grown to what net/http's client needs, so that a call
// does not grow a fresh one's), with a ctx that ends when the caller
// cancels it or the transport closes.
func (p *httpPeer) goRequest(f frame) {
	ctx, untrack := p.track(f)
	p.requests.Go(func() {
		defer untrack()
		p.sender.sendRequest(ctx, f)
	})
}

// track returns the ctx of request f's exchange, which the dispatcher
// ends once it has sent the request's notifications/cancelled (or the
// transport closes), and the func that ends it and forgets it.
func (p *httpPeer) track(f frame) (context.Context, func()) {
	ctx, cancel := context.WithCancel(p.life)
	key := normID(f.id)
	p.mu.Lock()
	p.inflight[key] = cancel
	p.mu.Unlock()
	return ctx, func() {
		cancel()
		p.mu.Lock()
		delete(p.inflight, key)
		p.mu.Unlock()
	}
}

// handOff goes on with request f, which its caller POSTed (callExchange),
// on one of the requests' goroutines, as a queued request runs (goRequest):
// its caller returns from the exchange and waits for the answer in Conn's
// call, where its ctx ends the wait. It is for what may take longer than a
// caller should be held without a way out (a session's renewal). Once the
// transport is closing run is not run, and the call ends with the Conn.
func (p *httpPeer) handOff(f frame, run func(ctx context.Context)) {
	ctx, untrack := p.track(f)
	if !p.goPooled(func() {
		defer untrack()
		run(ctx)
	}) {
		untrack()
	}
}

// goPooled runs fn on one of the requests' goroutines (counted in workers,
// as goWorker's are); false (and fn not run) once the transport is closing.
// Unlike goRequest it may be called from any goroutine: the check and the
// start are one step under mu.
func (p *httpPeer) goPooled(fn func()) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closing || p.life.Err() != nil {
		return false
	}
	p.requests.Go(fn)
	return true
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
	// On this goroutine, not through the pipe to Conn's read loop: the
	// pipe's writer waited for the reader, a hand-off each way on every
	// answer.
	line := oneLine(msg)
	err := p.conn.Deliver(line)
	if err != nil && p.life.Err() == nil {
		p.logger.Debug("delivering a message failed", logkey.Error, err)
	}
}

// oneLine returns msg as one line (without a newline), compacting JSON
// that spans lines, in a slice of its own: Conn.Deliver keeps it.
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
	return bytes.Clone(msg)
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
	var res json.RawMessage
	var err error
	if p.exchange && p.queue.idle() {
		res, err = p.callExchange(ctx, method, params)
	} else {
		res, err = p.conn.Call(ctx, method, params)
	}
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) && bytes.Equal(rpcErr.Data, transportMarker) {
		return nil, &transportError{msg: rpcErr.Message}
	}
	return res, err
}

// callExchange sends a request on the calling goroutine (see the top of
// this file): the POST ends when ctx does or the transport closes.
func (p *httpPeer) callExchange(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return p.conn.CallExchange(ctx, method, params, func(msg []byte) {
		ex := p.newCallerExchange(ctx)
		// A copy: net/http may read a request's body after its round trip
		// returned, and a request handed off (handOff) outlives msg.
		f := parseFrame(bytes.Clone(msg))
		f.caller = ex
		p.sender.sendRequest(ex.ctx, f)
		if ex.relay != nil {
			ex.relay.close()
		}
		if !ex.detached {
			ex.end()
		}
	})
}

// deliverReply delivers a message of the reply to a request, answer saying
// whether it is the request's answer. A caller that reads its own reply
// (ex not nil) delivers the answer itself as long as nothing came before
// it; from the first other message on (a notification, whose handler may
// block) every message of the reply goes through a relay, in order, so
// that the caller reads on, and its ctx ends its wait.
func (p *httpPeer) deliverReply(ex *callerExchange, msg []byte, answer bool) {
	if ex == nil || (answer && ex.relay == nil) {
		p.deliver(msg)
		return
	}
	if ex.relay == nil {
		r := &relay{wake: make(chan struct{}, 1)}
		if !p.goPooled(func() { r.run(p) }) {
			p.deliver(msg) // closing
			return
		}
		ex.relay = r
	}
	ex.relay.push(msg)
}

// relay delivers the messages pushed to it, in order, on a goroutine of
// its own, until it is closed and has delivered them all.
type relay struct {
	wake   chan struct{} // 1-buffered: something was pushed, or close
	mu     sync.Mutex
	queue  [][]byte
	closed bool
}

func (r *relay) push(msg []byte) {
	r.mu.Lock()
	r.queue = append(r.queue, msg)
	r.mu.Unlock()
	r.signal()
}

func (r *relay) close() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.signal()
}

func (r *relay) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func (r *relay) run(p *httpPeer) {
	for {
		r.mu.Lock()
		for len(r.queue) == 0 && !r.closed {
			r.mu.Unlock()
			<-r.wake
			r.mu.Lock()
		}
		if len(r.queue) == 0 {
			r.mu.Unlock()
			return
		}
		msg := r.queue[0]
		r.queue[0] = nil
		r.queue = r.queue[1:]
		r.mu.Unlock()
		p.deliver(msg)
	}
}

// callerExchange is the context of a request its caller POSTs
// (callExchange): it ends when the caller's ctx does or the transport
// closes, until detach, after which only the transport's end (or end)
// ends it.
type callerExchange struct {
	ctx        context.Context
	cancel     context.CancelFunc
	stopCaller func() bool
	stopLife   func() bool
	detached   bool
	relay      *relay // the reply's messages from the first that was not the answer (deliverReply)
}

func (p *httpPeer) newCallerExchange(caller context.Context) *callerExchange {
	ctx, cancel := context.WithCancel(context.WithoutCancel(caller))
	return &callerExchange{
		ctx:        ctx,
		cancel:     cancel,
		stopCaller: context.AfterFunc(caller, cancel),
		stopLife:   context.AfterFunc(p.life, cancel),
	}
}

// end ends the exchange's context.
func (ex *callerExchange) end() {
	ex.stopCaller()
	ex.stopLife()
	ex.cancel()
}

// finishOffPath runs fn, what is left of a reply whose answer the caller
// has, on one of the requests' goroutines, which then ends the exchange:
// the caller returns at once, and the caller's ctx (which may end as soon
// as its call returns) no longer ends the exchange. False (and fn not run)
// once the transport is closing.
func (p *httpPeer) finishOffPath(ex *callerExchange, fn func()) bool {
	ex.stopCaller()
	ex.detached = p.goPooled(func() {
		defer ex.end()
		fn()
	})
	return ex.detached
}

// CallWithin is Call bounded by d (none when d <= 0) by a context of its
// own: an HTTP exchange ends with its request's context.
func (p *httpPeer) CallWithin(ctx context.Context, d time.Duration, method string, params json.RawMessage) (json.RawMessage, error) {
	if d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	return p.call(ctx, method, params)
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
	p.workers.Wait()
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
	setTraceHeaders(req, body)
	return req, nil
}

// do sends req, with the caller's credential on a per-user instance, or
// the OAuth token when the server uses OAuth (see doAuthorized).
func (p *httpPeer) do(req *http.Request) (*http.Response, error) {
	if p.caller != nil {
		return p.caller.do(req, p.send)
	}
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

// scrub removes the configured header values (and OAuth tokens) from s.
func (p *httpPeer) scrub(s string) string {
	for _, v := range p.secrets {
		s = strings.ReplaceAll(s, v, "[redacted]")
	}
	if p.auth != nil {
		s = p.auth.Scrub(s)
	}
	if p.caller != nil {
		s = p.caller.scrub(s)
	}
	return s
}
