package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/mcptrunk/mcptrunk/internal/httpx"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
)

// Legacy HTTP+SSE (MCP 2024-11-05): a GET to the configured URL opens an
// event stream whose first event, "endpoint", names the URL to POST messages
// to (relative to the stream's URL, and only ever on the same origin).
// Everything the server sends, responses included, arrives as "message"
// events on that one stream; POSTs are answered 202 Accepted. The stream is
// the connection: when it ends, the connection is gone (Done), and the
// Client restarts it like a crashed process.

type SSE struct {
	*httpPeer
	streamURL *url.URL

	endpointSet chan struct{} // closed once endpoint is known
	endpointMu  sync.Mutex
	endpoint    string
}

func StartSSE(e Endpoint, h jsonrpc.Handler, logger *slog.Logger, connOpts jsonrpc.Options) (*SSE, error) {
	p, err := newHTTPPeer(e, kindSSE, h, logger, connOpts)
	if err != nil {
		return nil, err
	}
	u, _ := url.Parse(e.URL) // validated by newHTTPPeer
	t := &SSE{httpPeer: p, streamURL: u, endpointSet: make(chan struct{})}
	p.start(t)
	p.workers.Add(1)
	go func() {
		defer p.workers.Done()
		t.stream()
	}()
	return t, nil
}

func (t *SSE) Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return t.call(ctx, method, params)
}

func (t *SSE) Notify(method string, params json.RawMessage) error {
	return t.conn.Notify(method, params)
}

// Close ends the stream (which ends the session) and waits for every
// goroutine.
func (t *SSE) Close(ctx context.Context) error {
	t.closeOnce.Do(func() {
		t.flush(ctx)
		t.beginClose()
		t.shutdown()
	})
	return nil
}

// stream opens the event stream and reads it until it ends, which ends the
// connection.
func (t *SSE) stream() {
	req, err := t.newRequest(t.life, http.MethodGet, t.streamURL.String(), nil)
	if err != nil {
		t.fail(err)
		return
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := t.do(req)
	if err != nil {
		if t.life.Err() == nil {
			t.fail(fmt.Errorf("opening the SSE stream: %w", err))
		}
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body := httpx.ReadLimited(resp.Body, errorBodyLimit)
		t.fail(fmt.Errorf("opening the SSE stream: %w", t.statusError(resp, body, false)))
		return
	}
	if mt := httpx.MediaType(resp); mt != "text/event-stream" {
		t.fail(fmt.Errorf("opening the SSE stream: the server answered with %q, not an event stream: check its url and type", mt))
		return
	}
	var bad error
	err = readSSE(resp.Body, t.maxMessage, func(ev sseEvent) bool {
		switch ev.name {
		case "endpoint":
			if bad = t.setEndpoint(strings.TrimSpace(string(ev.data))); bad != nil {
				return false
			}
		case "message":
			t.deliver(ev.data)
		}
		return true
	})
	if t.life.Err() != nil {
		return // closed on purpose
	}
	switch {
	case bad != nil:
		t.fail(bad)
	case err != nil:
		t.fail(fmt.Errorf("the SSE stream broke: %w", err))
	default:
		select {
		case <-t.endpointSet:
			t.fail(errors.New("the server closed the SSE stream"))
		default:
			t.fail(errors.New("the server closed the SSE stream before sending its endpoint event"))
		}
	}
}

// setEndpoint takes the first endpoint event; later ones are ignored.
func (t *SSE) setEndpoint(data string) error {
	t.endpointMu.Lock()
	defer t.endpointMu.Unlock()
	if t.endpoint != "" {
		return nil
	}
	u, err := t.streamURL.Parse(data)
	if err != nil {
		return errors.New("the server's endpoint event holds no valid URL")
	}
	if u.Scheme != t.streamURL.Scheme || u.Host != t.streamURL.Host {
		return fmt.Errorf("the server's endpoint event points to another origin (%s); refusing to send there", u.Host)
	}
	t.endpoint = u.String()
	close(t.endpointSet)
	t.logger.Debug("SSE endpoint received")
	return nil
}

func (t *SSE) ready(ctx context.Context) error {
	select {
	case <-t.endpointSet:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (t *SSE) post(ctx context.Context, body []byte) (*http.Response, error) {
	t.endpointMu.Lock()
	target := t.endpoint
	t.endpointMu.Unlock()
	req, err := t.newRequest(ctx, http.MethodPost, target, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	return t.do(req)
}

// sendRequest POSTs a request; its response arrives on the stream. An HTTP
// failure ends the Call at once.
func (t *SSE) sendRequest(ctx context.Context, f frame) {
	if err := t.sendOther(ctx, f); err != nil {
		t.failRequest(ctx, f.id, err)
	}
}

func (t *SSE) sendOther(ctx context.Context, f frame) error {
	resp, err := t.post(ctx, f.body)
	if err != nil {
		return err
	}
	if !httpx.Is2xx(resp.StatusCode) {
		body := httpx.ReadLimited(resp.Body, errorBodyLimit)
		httpx.DrainClose(resp)
		var env envelope
		if f.kind == frameRequest && json.Unmarshal(body, &env) == nil && env.isResponse() && normID(env.ID) == normID(f.id) {
			t.deliver(body) // the server's own answer, in the body
			return nil
		}
		return t.statusError(resp, body, false)
	}
	if resp.StatusCode == http.StatusOK {
		// Some servers answer in the body as well as (or instead of) on the
		// stream; Conn ignores a second response to the same id.
		_ = readReply(resp, t.maxMessage, nil, func(msg []byte) bool { t.deliver(msg); return true })
	}
	httpx.DrainClose(resp)
	return nil
}
