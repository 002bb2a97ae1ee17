package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/mcptrunk/mcptrunk/internal/httpx"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/logkey"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
)

// Streamable HTTP (MCP 2025-03-26 and later): every message the trunk sends
// is POSTed to the server's one URL. A request's reply is a JSON body or an
// event stream that ends with the response; a notification or a response
// is answered 202 Accepted. The session id the server gives in its
// initialize reply goes with every later request, with the negotiated
// protocol version. After initialization a GET opens the standalone stream
// on which the server sends notifications and requests of its own (a 405
// means it offers none). Close DELETEs the session.
//
// Session expiry: a 404 to a request that carried a session id means the
// server forgot the session (it restarted, or the session timed out). The
// transport then runs the handshake again with the initialize params the
// Client sent first, takes the new session id, and sends the frame once
// more: the caller never sees it. Only when that new handshake fails does the
// connection end (Done), and the Client restarts it like a crashed process.

type Streamable struct {
	*httpPeer
	url string

	reinitMu  sync.Mutex // one re-handshake at a time
	reinitSeq atomic.Int64

	mu           sync.Mutex
	session      string
	protoVersion string
	initParams   json.RawMessage // the Client's initialize params, for a re-handshake
	listenOn     string          // the session the GET stream is for
	listenStop   context.CancelFunc
	deleteOnEnd  bool // a session was established, so Close DELETEs it
	stateless    bool // the connection speaks the stateless revision (see stateless.go)
}

func StartStreamable(e Endpoint, h jsonrpc.Handler, logger *slog.Logger, connOpts jsonrpc.Options) (*Streamable, error) {
	p, err := newHTTPPeer(e, kindStreamable, h, logger, connOpts)
	if err != nil {
		return nil, err
	}
	t := &Streamable{httpPeer: p, url: e.URL}
	p.exchange = true
	p.start(t)
	return t, nil
}

func (t *Streamable) Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return t.call(ctx, method, params)
}

func (t *Streamable) Notify(method string, params json.RawMessage) error {
	return t.conn.Notify(method, params)
}

// Close DELETEs the session (bounded by ctx and httpDeleteTimeout), then
// cancels every exchange and waits for every goroutine.
func (t *Streamable) Close(ctx context.Context) error {
	t.closeOnce.Do(func() {
		t.flush(ctx)
		t.beginClose()
		t.queue.close()
		t.stop() // aborts every POST and the GET stream
		t.mu.Lock()
		session, protoVersion, del := t.session, t.protoVersion, t.deleteOnEnd
		t.mu.Unlock()
		if del && session != "" {
			t.deleteSession(ctx, session, protoVersion)
		}
		t.shutdown()
	})
	return nil
}

func (t *Streamable) deleteSession(ctx context.Context, session, protoVersion string) {
	if ctx.Err() != nil {
		return // told to hurry: skip the courtesy
	}
	ctx, cancel := context.WithTimeout(ctx, httpDeleteTimeout)
	defer cancel()
	req, err := t.newRequest(ctx, http.MethodDelete, t.url, nil)
	if err != nil {
		return
	}
	setSession(req, session, protoVersion)
	resp, err := t.do(req)
	if err != nil {
		t.logger.Debug("ending the session failed", logkey.Error, err)
		return
	}
	httpx.DrainClose(resp)
	if !httpx.Is2xx(resp.StatusCode) && resp.StatusCode != http.StatusMethodNotAllowed && resp.StatusCode != http.StatusNotFound {
		t.logger.Debug("ending the session failed", "status", resp.StatusCode)
	}
}

func setSession(req *http.Request, session, protoVersion string) {
	if session != "" {
		req.Header.Set(protocol.HeaderSessionID, session)
	}
	if protoVersion != "" {
		req.Header.Set(protocol.HeaderProtocolVersion, protoVersion)
	}
}

func (t *Streamable) current() (session, protoVersion string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.session, t.protoVersion
}

func (t *Streamable) ready(context.Context) error { return nil }

// post sends one message with the session's headers.
func (t *Streamable) post(ctx context.Context, body []byte, session, protoVersion string) (*http.Response, error) {
	req, err := t.newRequest(ctx, http.MethodPost, t.url, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	setSession(req, session, protoVersion)
	return t.do(req)
}

// sessionGone reports whether a reply says the server no longer knows the
// session the request carried: 404, as the specification says, or a 400
// that says so in words (what the TypeScript SDK's example servers answer).
func sessionGone(resp *http.Response, body []byte, sent string) bool {
	if sent == "" {
		return false
	}
	switch resp.StatusCode {
	case http.StatusNotFound:
		return true
	case http.StatusBadRequest:
		return bytes.Contains(bytes.ToLower(body), []byte("session"))
	}
	return false
}

func (t *Streamable) sendRequest(ctx context.Context, f frame) {
	if f.method == "initialize" {
		t.mu.Lock()
		t.initParams = bytes.Clone(f.params)
		t.mu.Unlock()
	}
	t.postRequest(ctx, f, false)
}

// postRequest POSTs request f and reads its reply. A reply that says the
// server forgot the session renews it and sends f once more, unless
// renewed says that was done already. On its caller's goroutine (an
// exchange) the renewal and the second POST are handed off: a renewal
// takes a handshake, up to the connect timeout, that every request which
// saw the session gone waits for, and the caller's ctx must be able to end
// its wait.
func (t *Streamable) postRequest(ctx context.Context, f frame, renewed bool) {
	initialize := f.method == "initialize"
	for ; ; renewed = true {
		session, protoVersion := t.current()
		if initialize {
			session, protoVersion = "", "" // a new session
		}
		resp, err := t.postFrame(ctx, f, session, protoVersion)
		if err != nil {
			t.failRequest(ctx, f.id, err)
			return
		}
		if !httpx.Is2xx(resp.StatusCode) {
			body := httpx.ReadLimited(resp.Body, errorBodyLimit)
			httpx.DrainClose(resp)
			if !renewed && sessionGone(resp, body, session) {
				if f.caller != nil {
					if ctx.Err() == nil {
						f.caller = nil
						t.handOff(f, func(ctx context.Context) {
							if err := t.renewSession(session); err != nil {
								t.failRequest(ctx, f.id, err)
								return
							}
							t.postRequest(ctx, f, true)
						})
					}
					return
				}
				if err := t.renewSession(session); err != nil {
					t.failRequest(ctx, f.id, err)
					return
				}
				continue
			}
			t.replyError(ctx, f, resp, body)
			return
		}
		t.readRequestReply(ctx, f, resp)
		return
	}
}

// replyError ends a request that got an error status: with the JSON-RPC
// response in the body if it answers this request, else with a
// description of the status.
func (t *Streamable) replyError(ctx context.Context, f frame, resp *http.Response, body []byte) {
	var env envelope
	if json.Unmarshal(bytes.TrimSpace(body), &env) == nil && env.isResponse() && normID(env.ID) == normID(f.id) {
		t.deliver(body)
		return
	}
	t.failRequest(ctx, f.id, t.statusError(resp, body, f.method == "initialize"))
}

// readRequestReply reads a 2xx reply to a request: the messages in it go to
// Conn, and the request ends with its response, or with an error if the
// reply ends without one. A reply stream the server ends early after
// giving event ids is resumed with GET and Last-Event-ID.
func (t *Streamable) readRequestReply(ctx context.Context, f frame, resp *http.Response) {
	initialize := f.method == "initialize"
	if initialize {
		if sid := resp.Header.Get(protocol.HeaderSessionID); sid != "" {
			t.mu.Lock()
			t.session, t.deleteOnEnd = sid, true
			t.mu.Unlock()
		}
	}
	if resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent {
		// Not what the specification allows for a request; the answer may
		// still come on the GET stream, and the call timeout bounds the wait.
		httpx.DrainClose(resp)
		t.logger.Debug("the server accepted a request without answering it", "method", f.method)
		return
	}
	want := normID(f.id)
	answered := false
	handle := func(msg []byte) bool {
		var env envelope
		if json.Unmarshal(msg, &env) == nil && env.isResponse() && normID(env.ID) == want {
			if initialize && env.Error == nil {
				t.noteInit(env.Result)
			}
			t.deliverReply(f.caller, msg, true)
			answered = true
			return false
		}
		t.deliverReply(f.caller, msg, false)
		return true
	}
	var cur sseCursor
	err := readReply(resp, t.maxMessage, &cur, handle)
	switch {
	case answered && err == nil && f.caller != nil && httpx.MediaType(resp) == "text/event-stream":
		// The caller has its answer: it returns now, and the stream's end is
		// read off its path. (A JSON body was read to its end already.)
		if !t.finishOffPath(f.caller, func() { endReply(resp.Body) }) {
			resp.Body.Close()
		}
	case answered && err == nil:
		endReply(resp.Body)
	default:
		resp.Body.Close()
	}
	// At the stateless revision there is no GET to resume a stream with.
	sse := httpx.MediaType(resp) == "text/event-stream" && !t.isStateless()
	for tries := 0; !answered && err == nil && sse && cur.lastID != "" && ctx.Err() == nil && tries < sseResumeAttempts; tries++ {
		before := cur.lastID
		err = t.resume(ctx, &cur, handle)
		if cur.lastID != before {
			tries = -1 // progress: the attempts count again from zero
		}
	}
	switch {
	case answered || ctx.Err() != nil:
	case err != nil:
		t.failRequest(ctx, f.id, t.readError(err))
	default:
		t.failRequest(ctx, f.id, errors.New("the server ended its reply without answering the request"))
	}
}

// resume reopens a reply stream the server ended, after the delay it asked
// for, with a GET that carries the last event id.
func (t *Streamable) resume(ctx context.Context, cur *sseCursor, handle func([]byte) bool) error {
	delay := cur.retry
	if delay <= 0 {
		delay = ListenRetryMin
	}
	if !httpx.Sleep(ctx, delay) {
		return ctx.Err()
	}
	session, protoVersion := t.current()
	resp, err := t.get(ctx, session, protoVersion, cur.lastID)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || httpx.MediaType(resp) != "text/event-stream" {
		body := httpx.ReadLimited(resp.Body, errorBodyLimit)
		return fmt.Errorf("resuming the reply stream: %w", t.statusError(resp, body, false))
	}
	return readReply(resp, t.maxMessage, cur, handle)
}

// noteInit records the protocol version an initialize result negotiated.
func (t *Streamable) noteInit(result json.RawMessage) {
	var r struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if json.Unmarshal(result, &r) == nil && r.ProtocolVersion != "" {
		t.mu.Lock()
		t.protoVersion = r.ProtocolVersion
		t.mu.Unlock()
	}
}

func (t *Streamable) sendOther(ctx context.Context, f frame) error {
	for attempt := 0; ; attempt++ {
		session, protoVersion := t.current()
		resp, err := t.postFrame(ctx, f, session, protoVersion)
		if err != nil {
			return err
		}
		if !httpx.Is2xx(resp.StatusCode) {
			body := httpx.ReadLimited(resp.Body, errorBodyLimit)
			httpx.DrainClose(resp)
			if attempt == 0 && sessionGone(resp, body, session) {
				if err := t.renewSession(session); err != nil {
					return err
				}
				continue
			}
			return t.statusError(resp, body, false)
		}
		if resp.StatusCode == http.StatusOK {
			// Not expected for a notification, but whatever it holds is the
			// server's to say.
			_ = readReply(resp, t.maxMessage, nil, func(msg []byte) bool { t.deliver(msg); return true })
		}
		httpx.DrainClose(resp)
		if f.method == "notifications/initialized" {
			t.listen(session, protoVersion)
		}
		return nil
	}
}

// get opens an event stream: the standalone one, or a resumption.
func (t *Streamable) get(ctx context.Context, session, protoVersion, lastEventID string) (*http.Response, error) {
	req, err := t.newRequest(ctx, http.MethodGet, t.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	setSession(req, session, protoVersion)
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	return t.do(req)
}

// listen (re)starts the standalone GET stream for session, ending the one
// for an earlier session.
func (t *Streamable) listen(session, protoVersion string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.listenOn == session && t.listenStop != nil {
		return
	}
	if t.listenStop != nil {
		t.listenStop()
	}
	ctx, cancel := context.WithCancel(t.life)
	if !t.goWorker(func() { t.listenLoop(ctx, session, protoVersion) }) {
		cancel()
		return
	}
	t.listenOn, t.listenStop = session, cancel
}

// listenLoop keeps the standalone stream open, reconnecting with backoff
// (and Last-Event-ID when the server gave event ids), until ctx ends, the
// server says it offers none, or the session is gone.
func (t *Streamable) listenLoop(ctx context.Context, session, protoVersion string) {
	var cur sseCursor
	opened := false
	delay := ListenRetryMin
	backoff := func() bool {
		ok := httpx.Sleep(ctx, delay)
		delay = min(delay*2, listenRetryMax)
		return ok
	}
	for ctx.Err() == nil {
		resp, err := t.get(ctx, session, protoVersion, cur.lastID)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			t.logger.Debug("opening the server's event stream failed; retrying", logkey.Error, err, "in", delay)
			if !backoff() {
				return
			}
			continue
		}
		if resp.StatusCode == http.StatusOK && httpx.MediaType(resp) == "text/event-stream" {
			if !opened {
				t.logger.Debug("listening on the server's event stream")
			}
			opened, delay = true, ListenRetryMin
			err := readReply(resp, t.maxMessage, &cur, func(msg []byte) bool { t.deliver(msg); return true })
			resp.Body.Close()
			if ctx.Err() != nil {
				return
			}
			wait := cur.retry
			if wait <= 0 {
				wait = ListenRetryMin
			}
			t.logger.Debug("the server's event stream ended; reopening", logkey.Error, err)
			if !httpx.Sleep(ctx, wait) {
				return
			}
			continue
		}
		body := httpx.ReadLimited(resp.Body, errorBodyLimit)
		httpx.DrainClose(resp)
		switch {
		case resp.StatusCode == http.StatusMethodNotAllowed:
			t.logger.Debug("the server offers no event stream of its own (405)")
			return
		case sessionGone(resp, body, session) && opened:
			// The stream worked on this session and now the server does not
			// know it: start a new one (which starts a new stream).
			if err := t.renewSession(session); err != nil {
				t.logger.Debug("renewing the session failed", logkey.Error, err)
			}
			return
		case resp.StatusCode == http.StatusNotFound, httpx.Is2xx(resp.StatusCode):
			t.logger.Debug("the server offers no event stream of its own", "status", resp.StatusCode)
			return
		case resp.StatusCode == http.StatusUnauthorized, resp.StatusCode == http.StatusForbidden:
			t.logger.Warn("the server refused its event stream; its notifications will be missed",
				logkey.Error, t.statusError(resp, body, false))
			return
		}
		t.logger.Debug("opening the server's event stream failed; retrying", logkey.Error, t.statusError(resp, body, false), "in", delay)
		if !backoff() {
			return
		}
	}
}

// renewSession runs the handshake again after the server forgot session.
// Concurrent callers that saw the same session gone share one handshake.
// When it fails the connection ends, with the reason.
func (t *Streamable) renewSession(stale string) error {
	t.reinitMu.Lock()
	defer t.reinitMu.Unlock()
	if t.life.Err() != nil {
		return jsonrpc.ErrClosed
	}
	if cur, _ := t.current(); cur != stale {
		return nil // renewed already
	}
	t.logger.Info("the server ended the session; starting a new one")
	timeout := t.connectTO
	if timeout <= 0 {
		timeout = httpNotifyTimeout
	}
	ctx, cancel := context.WithTimeout(t.life, timeout)
	defer cancel()
	caps, err := t.reinitialize(ctx)
	if err != nil {
		if t.life.Err() != nil {
			return jsonrpc.ErrClosed
		}
		err = fmt.Errorf("the server ended the session and starting a new one failed: %w", err)
		t.fail(err)
		return err
	}
	t.logger.Info("new session established")
	// The server may have restarted with a different catalog: have the
	// Client read its lists again.
	for _, c := range []struct{ capability, method string }{
		{"tools", "notifications/tools/list_changed"},
		{"prompts", "notifications/prompts/list_changed"},
		{"resources", "notifications/resources/list_changed"},
	} {
		if _, ok := caps[c.capability]; ok {
			t.deliver([]byte(`{"jsonrpc":"2.0","method":"` + c.method + `"}`))
		}
	}
	return nil
}

// reinitialize POSTs the cached initialize params under an id of its own,
// adopts the new session and protocol version, sends
// notifications/initialized and reopens the event stream. It returns the
// server's capabilities.
func (t *Streamable) reinitialize(ctx context.Context) (map[string]json.RawMessage, error) {
	t.mu.Lock()
	params := t.initParams
	t.mu.Unlock()
	if params == nil {
		return nil, errors.New("no initialize request to repeat")
	}
	id := fmt.Sprintf(`"mcptrunk-reinit-%d"`, t.reinitSeq.Add(1))
	body := []byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"initialize","params":`)
	body = append(body, params...)
	body = append(body, '}')

	resp, err := t.post(ctx, body, "", "")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if !httpx.Is2xx(resp.StatusCode) {
		return nil, t.statusError(resp, httpx.ReadLimited(resp.Body, errorBodyLimit), true)
	}
	session := resp.Header.Get(protocol.HeaderSessionID)
	var result json.RawMessage
	var rpcErr *jsonrpc.Error
	want := normID(json.RawMessage(id))
	err = readReply(resp, t.maxMessage, nil, func(msg []byte) bool {
		var env envelope
		if json.Unmarshal(msg, &env) == nil && env.isResponse() && normID(env.ID) == want {
			result, rpcErr = env.Result, env.Error
			return false
		}
		t.deliver(msg)
		return true
	})
	switch {
	case rpcErr != nil:
		return nil, fmt.Errorf("initialize: %w", rpcErr)
	case result == nil && err != nil:
		return nil, fmt.Errorf("initialize: %w", t.readError(err))
	case result == nil:
		return nil, errors.New("the server ended its initialize reply without answering")
	}
	var r struct {
		ProtocolVersion string                     `json:"protocolVersion"`
		Capabilities    map[string]json.RawMessage `json:"capabilities"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		return nil, fmt.Errorf("decoding the initialize result: %w", err)
	}
	t.mu.Lock()
	t.session, t.protoVersion = session, r.ProtocolVersion
	t.deleteOnEnd = t.deleteOnEnd || session != ""
	t.mu.Unlock()

	nresp, err := t.post(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), session, r.ProtocolVersion)
	if err != nil {
		return nil, fmt.Errorf("notifications/initialized: %w", err)
	}
	nbody := httpx.ReadLimited(nresp.Body, errorBodyLimit)
	httpx.DrainClose(nresp)
	if !httpx.Is2xx(nresp.StatusCode) {
		return nil, fmt.Errorf("notifications/initialized: %w", t.statusError(nresp, nbody, false))
	}
	t.listen(session, r.ProtocolVersion)
	return r.Capabilities, nil
}
