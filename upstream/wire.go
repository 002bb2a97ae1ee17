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

// wire is one connection to the server: its transport and the adapter
// of the revision negotiated on it (revision), chosen once the handshake
// has said which. Everything the Client sends goes through it (the
// proxy's calls, the lists, the health checks), so no request to a
// stateless server leaves without the _meta of its revision, and no
// reserved _meta key of another hop (the host's, say) reaches any server.
type wire struct {
	Transport
	c    *Client
	rev  atomic.Pointer[revision] // set by negotiate once the handshake's result says which (settle)
	life context.Context          // ends when the connection is closed or the Client closes
	end  context.CancelFunc

	ackMu sync.Mutex // one listen awaiting its acknowledgement at a time (see openListen)

	streams sync.WaitGroup // the listen requests in flight

	mu      sync.Mutex
	closed  bool                     // Close was called: no new streams
	pending chan json.RawMessage     // where the acknowledgement of the listen being opened goes
	subs    map[string]*listenStream // resource subscriptions, by URI
}

// revision is the server edge: what one revision of MCP asks of the
// messages the trunk sends a server, and what stands in for what it
// removed. A connection has one, chosen from its handshake (revisionOf),
// so that nothing else asks which revision a server speaks.
type revision interface {
	// call sends a request on w made for the host request opts
	// describes, with the observer's _meta (extra), bounded by d (none
	// when d <= 0).
	call(ctx context.Context, w *wire, opts CallOptions, extra map[string]json.RawMessage, d time.Duration, method string, params json.RawMessage) (json.RawMessage, error)
	// notifies reports whether the revision has the notification method.
	notifies(method string) bool
	// version is the protocol version the connection speaks.
	version() string
	// ready starts what the connection needs once it is up, before its
	// lists are read (caps: the server's capabilities).
	ready(w *wire, caps json.RawMessage)
	// inputInResults reports whether the server asks for a call's input
	// inside its results (input_required, answered by a retry) rather
	// than with requests of its own on the connection.
	inputInResults() bool
}

// revisionOf is the adapter of the revision a handshake settled.
func revisionOf(init InitResult) revision {
	if init.stateless() {
		return statelessRevision{}
	}
	return revision2025{init.ProtocolVersion}
}

// revision2025 is a 2025-era revision (2025-11-25 and before): the server
// learnt the host's facts at initialize and logging/setLevel, so a request
// goes with no reserved _meta but the observer's.
type revision2025 struct{ protocolVersion string }

func (r revision2025) call(ctx context.Context, w *wire, _ CallOptions, extra map[string]json.RawMessage, d time.Duration, method string, params json.RawMessage) (json.RawMessage, error) {
	params, err := w.params2025(params, extra)
	if err != nil {
		return nil, err
	}
	return w.send(ctx, d, method, params)
}

func (revision2025) notifies(string) bool         { return true }
func (r revision2025) version() string            { return r.protocolVersion }
func (revision2025) ready(*wire, json.RawMessage) {}
func (revision2025) inputInResults() bool         { return false }

// statelessRevision is 2026-07-28: every request carries the facts of the
// host request it is made for in _meta (requestMeta), and the adapter
// stands in for what the revision removed: logging/setLevel becomes a
// per-request log level, a resource subscription a subscriptions/listen
// stream the wire holds open, ping a server/discover; the lists that
// change are listened for while the connection lives.
type statelessRevision struct{}

func (statelessRevision) call(ctx context.Context, w *wire, opts CallOptions, extra map[string]json.RawMessage, d time.Duration, method string, params json.RawMessage) (json.RawMessage, error) {
	if d > 0 && statelessStandIn[method] {
		// A method the wire answers otherwise: the bound is the context's.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
		d = 0
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

func (statelessRevision) notifies(method string) bool         { return !protocol.RemovedInStateless[method] }
func (statelessRevision) version() string                     { return protocol.Stateless }
func (statelessRevision) ready(w *wire, caps json.RawMessage) { w.watchLists(caps) }
func (statelessRevision) inputInResults() bool                { return true }

// statelessStandIn are the methods statelessRevision answers otherwise
// (see its call).
var statelessStandIn = map[string]bool{"ping": true, "logging/setLevel": true, "resources/subscribe": true, "resources/unsubscribe": true}

// settle makes the revision init says the one the wire speaks.
func (w *wire) settle(init InitResult) {
	rev := revisionOf(init)
	w.rev.Store(&rev)
}

// revision is the connection's adapter: a 2025 one of no version until
// negotiate has settled it (the handshake itself goes straight to the
// transport).
func (w *wire) revision() revision {
	if r := w.rev.Load(); r != nil {
		return *r
	}
	return revision2025{}
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

// callWith sends a request as the connection's revision wants it (told
// opts, at the stateless revision), bounded by d (none when d <= 0),
// telling ctx's outgoing.Observer (reqmeta.go) of it. The error when d
// passes first is context.DeadlineExceeded.
func (w *wire) callWith(ctx context.Context, opts CallOptions, d time.Duration, method string, params json.RawMessage) (res json.RawMessage, err error) {
	rev := w.revision()
	extra, end := w.observe(ctx, rev, method, params)
	if end != nil {
		defer func() { end(res, err) }()
	}
	return rev.call(ctx, w, opts, extra, d, method, params)
}

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
// connection's revision does not have is not sent.
func (w *wire) Notify(method string, params json.RawMessage) error {
	if !w.revision().notifies(method) {
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
