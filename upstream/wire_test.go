package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/internal/testkit"
)

// sent is one message a recordingTransport was given.
type sent struct {
	method string
	params json.RawMessage
	notify bool
}

// recordingTransport is a server that answers every request {} and
// remembers what it was sent, in order.
type recordingTransport struct {
	mu   sync.Mutex
	msgs []sent
	done chan struct{}
}

func (r *recordingTransport) record(m sent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, m)
}

func (r *recordingTransport) Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return r.CallWithin(ctx, 0, method, params)
}

func (r *recordingTransport) CallWithin(_ context.Context, _ time.Duration, method string, params json.RawMessage) (json.RawMessage, error) {
	r.record(sent{method: method, params: params})
	return json.RawMessage(`{}`), nil
}

func (r *recordingTransport) Notify(method string, params json.RawMessage) error {
	r.record(sent{method: method, params: params, notify: true})
	return nil
}

func (r *recordingTransport) Done() <-chan struct{}       { return r.done }
func (r *recordingTransport) Err() error                  { return nil }
func (r *recordingTransport) Close(context.Context) error { return nil }
func (r *recordingTransport) take() []sent {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.msgs
	r.msgs = nil
	return out
}
func (r *recordingTransport) methods(msgs []sent) (m []string) {
	for _, s := range msgs {
		m = append(m, s.method)
	}
	return m
}

// wireAt is a connection of a Client that was never started, speaking the
// revision init settled, over a recordingTransport.
func wireAt(t *testing.T, init InitResult) (*Client, *wire, *recordingTransport) {
	t.Helper()
	c := newClient("srv", config.Spec{Type: config.TransportStdio}, clientOptions{logger: slog.New(slog.NewTextHandler(&testkit.Buffer{}, nil)), version: "test", capabilities: json.RawMessage(`{"roots":{}}`)})
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	rt := &recordingTransport{done: make(chan struct{})}
	w := newWire(c)
	w.Transport = rt
	w.settle(init)
	c.mu.Lock()
	c.init = init
	c.mu.Unlock()
	return c, w, rt
}

// fromHost are a host's params: a reserved _meta key of the host's hop,
// which no server may get, beside one that passes.
const fromHost = `{"name":"echo","_meta":{"io.modelcontextprotocol/logLevel":"error","progressToken":7}}`

// TestRevisionAdapters: what a connection sends is its revision's
// adapter's doing, chosen from the handshake: at 2025-11-25 requests and
// notifications pass as the trunk makes them, with no reserved _meta; at
// 2026-07-28 each request carries the revision's _meta told the host
// request's facts, and what the revision removed is stood in for or not
// sent. The Caller says which way the server asks for a call's input.
func TestRevisionAdapters(t *testing.T) {
	ctx := ctxFor(t)
	opts := CallOptions{Caps: json.RawMessage(`{"elicitation":{}}`), Level: "debug", LevelSet: true}

	t.Run("2025", func(t *testing.T) {
		c, w, rt := wireAt(t, InitResult{ProtocolVersion: protocol.Revision2025})
		if _, err := w.callWith(ctx, opts, 0, "tools/call", json.RawMessage(fromHost)); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Call(ctx, "ping", nil); err != nil {
			t.Fatal(err)
		}
		if err := w.Notify("notifications/roots/list_changed", nil); err != nil {
			t.Fatal(err)
		}
		msgs := rt.take()
		if got := rt.methods(msgs); !slices.Equal(got, []string{"tools/call", "ping", "notifications/roots/list_changed"}) {
			t.Fatalf("sent %v", got)
		}
		if rawjson.HasReservedMeta(msgs[0].params) || string(rawjson.MetaValue(msgs[0].params, "progressToken")) != "7" {
			t.Errorf("tools/call params %s: want no reserved _meta and the progressToken", msgs[0].params)
		}
		if c.For(opts).InputInResults() {
			t.Error("a 2025 server asks for input in results, says its Caller")
		}
		if v := w.revision().version(); v != protocol.Revision2025 {
			t.Errorf("version %q", v)
		}
	})

	t.Run("stateless", func(t *testing.T) {
		c, w, rt := wireAt(t, InitResult{ProtocolVersion: protocol.Stateless})
		if _, err := w.callWith(ctx, opts, 0, "tools/call", json.RawMessage(fromHost)); err != nil {
			t.Fatal(err)
		}
		msgs := rt.take()
		if len(msgs) != 1 || msgs[0].method != "tools/call" {
			t.Fatalf("sent %v", rt.methods(msgs))
		}
		p := msgs[0].params
		for key, want := range map[string]string{
			protocol.MetaProtocolVersion:    `"` + protocol.Stateless + `"`,
			protocol.MetaClientCapabilities: `{"elicitation":{}}`, // the host request's, not the Fleet's
			protocol.MetaLogLevel:           `"debug"`,            // the host request's, not its hop's "error"
			"progressToken":                 `7`,
		} {
			if got := string(rawjson.MetaValue(p, key)); got != want {
				t.Errorf("_meta %s = %s, want %s (params %s)", key, got, want, p)
			}
		}

		// logging/setLevel is remembered, not sent: the trunk's own
		// requests carry it from then on.
		if _, err := w.Call(ctx, "logging/setLevel", json.RawMessage(`{"level":"info"}`)); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Call(ctx, "ping", nil); err != nil {
			t.Fatal(err)
		}
		msgs = rt.take()
		if got := rt.methods(msgs); !slices.Equal(got, []string{protocol.MethodDiscover}) {
			t.Fatalf("setLevel and ping sent %v, want only the discover standing in for ping", got)
		}
		if got := string(rawjson.MetaValue(msgs[0].params, protocol.MetaLogLevel)); got != `"info"` {
			t.Errorf("the trunk's own request carries logLevel %s, want the one setLevel set", got)
		}

		_, err := w.Call(ctx, "initialize", json.RawMessage(`{}`))
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeMethodNotFound {
			t.Errorf("initialize at the stateless revision: %v, want method not found", err)
		}
		if err := w.Notify("notifications/roots/list_changed", nil); err != nil {
			t.Fatal(err)
		}
		if err := w.Notify("notifications/cancelled", json.RawMessage(`{"requestId":1}`)); err != nil {
			t.Fatal(err)
		}
		if got := rt.methods(rt.take()); !slices.Equal(got, []string{"notifications/cancelled"}) {
			t.Errorf("sent %v, want only the notification the revision has", got)
		}
		if !c.For(opts).InputInResults() {
			t.Error("a stateless server asks for input with requests, says its Caller")
		}
	})
}

// settlingTransport answers initialize for revision 2025-06-18 and notes
// the revision its wire speaks when notifications/initialized is sent.
type settlingTransport struct {
	recordingTransport
	w      *wire
	atInit atomic.Pointer[revision]
}

func (s *settlingTransport) Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if method == "initialize" {
		s.record(sent{method: method, params: params})
		return json.RawMessage(`{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}`), nil
	}
	return s.recordingTransport.Call(ctx, method, params)
}

func (s *settlingTransport) Notify(method string, params json.RawMessage) error {
	if method == "notifications/initialized" {
		rev := s.w.revision()
		s.atInit.Store(&rev)
	}
	return s.recordingTransport.Notify(method, params)
}

// The wire speaks the negotiated revision from the moment the handshake's
// result says which: what the handshake sends after it (here
// notifications/initialized) already goes in that revision's form.
func TestNegotiateSettlesTheRevisionAtOnce(t *testing.T) {
	c := newClient("srv", config.Spec{Type: config.TransportStdio, ProtocolVersion: "2025-06-18"}, clientOptions{logger: slog.New(slog.NewTextHandler(&testkit.Buffer{}, nil)), version: "test"})
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	w := newWire(c)
	st := &settlingTransport{recordingTransport: recordingTransport{done: make(chan struct{})}, w: w}
	w.Transport = st
	if _, _, err := c.negotiate(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	got := st.atInit.Load()
	if got == nil {
		t.Fatal("notifications/initialized was never sent")
	}
	if want := (revision2025{"2025-06-18"}); *got != revision(want) {
		t.Errorf("the wire spoke %#v when notifications/initialized went out, want %#v", *got, want)
	}
	if w.revision() != revision(revision2025{"2025-06-18"}) {
		t.Errorf("after negotiate the wire speaks %#v", w.revision())
	}
}
