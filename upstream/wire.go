package upstream

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
)

// wire is one connection to the server: its transport and what the
// revision negotiated on it asks of every message. Everything the Client
// sends goes through it (the proxy's calls, the lists, the health checks),
// so no request to a stateless server leaves without the _meta of its
// revision, and no reserved _meta key of another hop (the host's, say)
// reaches any server.
//
// At the stateless revision it also stands in for what that revision
// removed: logging/setLevel becomes a per-request log level, a resource
// subscription becomes a subscriptions/listen stream the wire holds open,
// and ping becomes server/discover.
type wire struct {
	Transport
	c         *Client
	stateless atomic.Bool
	life      context.Context // ends when the connection is closed or the Client closes
	end       context.CancelFunc

	ackMu sync.Mutex // one listen awaiting its acknowledgement at a time (see openListen)

	streams sync.WaitGroup // the listen requests in flight

	mu      sync.Mutex
	closed  bool                     // Close was called: no new streams
	pending chan json.RawMessage     // where the acknowledgement of the listen being opened goes
	subs    map[string]*listenStream // resource subscriptions, by URI
}

// closeStreamsMax bounds how long Close waits for the listen requests to
// be cancelled (a wedged server may not read them).
var closeStreamsMax = time.Second

func newWire(c *Client) *wire {
	life, end := context.WithCancel(c.life)
	return &wire{c: c, life: life, end: end, subs: map[string]*listenStream{}}
}

// Close ends the connection's listen requests, telling the server (a
// server may hold a stream open for a client that is gone until it hears
// so), and then the transport.
func (w *wire) Close(ctx context.Context) error {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.end()
	cancelled := make(chan struct{})
	go func() {
		w.streams.Wait()
		close(cancelled)
	}()
	select {
	case <-cancelled:
	case <-ctx.Done():
	case <-time.After(closeStreamsMax):
	}
	return w.Transport.Close(ctx)
}

// Call sends a request of the trunk's own (callWith with no options).
func (w *wire) Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return w.callWith(ctx, CallOptions{}, 0, method, params)
}

// callWith sends a request with the _meta its revision wants (at the
// stateless revision, told opts), bounded by d (none when d <= 0), telling
// ctx's outgoing.Observer (reqmeta.go) of it. The error when d passes
// first is context.DeadlineExceeded.
func (w *wire) callWith(ctx context.Context, opts CallOptions, d time.Duration, method string, params json.RawMessage) (res json.RawMessage, err error) {
	if d > 0 && w.stateless.Load() && statelessStandIn[method] {
		// A method the wire answers otherwise: the bound is the context's.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
		d = 0
	}
	extra, end := w.observe(ctx, method, params)
	if end != nil {
		defer func() { end(res, err) }()
	}
	if !w.stateless.Load() {
		params, err := w.params2025(params, extra)
		if err != nil {
			return nil, err
		}
		return w.send(ctx, d, method, params)
	}
	switch method {
	case "ping":
		// Removed at this revision; a discover proves the server answers.
		if _, err := w.stampedCall(ctx, opts, extra, 0, protocol.MethodDiscover, json.RawMessage(`{}`)); err != nil {
			return nil, err
		}
		return json.RawMessage(`{}`), nil
	case "logging/setLevel":
		return w.c.setLogLevel(params)
	case "resources/subscribe":
		return w.subscribe(ctx, params)
	case "resources/unsubscribe":
		return w.unsubscribe(params)
	}
	if protocol.RemovedInStateless[method] {
		return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "server %q: %s does not exist at revision %s", w.c.id, method, protocol.Stateless)
	}
	return w.stampedCall(ctx, opts, extra, d, method, params)
}

// statelessStandIn are the methods the wire answers otherwise at the
// stateless revision (see callWith's switch).
var statelessStandIn = map[string]bool{"ping": true, "logging/setLevel": true, "resources/subscribe": true, "resources/unsubscribe": true}

// stampedCall sends a request with the stateless revision's reserved
// _meta, told opts, and the observer's keys (extra).
func (w *wire) stampedCall(ctx context.Context, opts CallOptions, extra map[string]json.RawMessage, d time.Duration, method string, params json.RawMessage) (json.RawMessage, error) {
	params, err := rawjson.ReplaceReservedMeta(params, w.c.requestMeta(opts, extra))
	if err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "server %q: %s: params: %v", w.c.id, method, err)
	}
	return w.send(ctx, d, method, params)
}

// send hands a request to the transport, bounded by d when d > 0.
func (w *wire) send(ctx context.Context, d time.Duration, method string, params json.RawMessage) (json.RawMessage, error) {
	return w.Transport.CallWithin(ctx, d, method, params)
}

// Notify sends a notification without reserved _meta keys; one the
// stateless revision removed is not sent to a server that speaks it.
func (w *wire) Notify(method string, params json.RawMessage) error {
	if w.stateless.Load() && protocol.RemovedInStateless[method] {
		return nil
	}
	params, err := w.stripMeta(params)
	if err != nil {
		return err
	}
	return w.Transport.Notify(method, params)
}

// stripMeta drops the reserved _meta keys another hop set.
func (w *wire) stripMeta(params json.RawMessage) (json.RawMessage, error) {
	if !rawjson.HasReservedMeta(params) {
		return params, nil
	}
	out, err := rawjson.ReplaceReservedMeta(params, nil)
	if err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "server %q: params: %v", w.c.id, err)
	}
	return out, nil
}

// setLogLevel remembers the level a logging/setLevel asked for: at the
// stateless revision it goes with every request instead.
func (c *Client) setLogLevel(params json.RawMessage) (json.RawMessage, error) {
	var p struct {
		Level *string `json:"level"`
	}
	if err := json.Unmarshal(params, &p); err != nil || p.Level == nil || *p.Level == "" {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "server %q: logging/setLevel: params need a level", c.id)
	}
	level, _ := json.Marshal(*p.Level)
	raw := json.RawMessage(level)
	c.logLevel.Store(&raw)
	return json.RawMessage(`{}`), nil
}
