package tracing

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/proxy/observe"
	"github.com/mcptrunk/mcptrunk/upstream/outgoing"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestEnabled(t *testing.T) {
	for i, c := range []struct {
		env  func(string) string
		want bool
	}{
		{env(), false},
		{env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"), true},
		{env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://127.0.0.1:4318/v1/traces"), true},
		{env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318", "OTEL_SDK_DISABLED", "TRUE"), false},
		{env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318", "OTEL_SDK_DISABLED", "false"), true},
		{env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318", "OTEL_TRACES_EXPORTER", "none"), false},
		{env("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "http://127.0.0.1:4318/v1/metrics"), false},
	} {
		if got := Enabled(c.env); got != c.want {
			t.Errorf("case %d: Enabled = %v", i, got)
		}
	}
}

func TestExporterProtocol(t *testing.T) {
	ctx := context.Background()
	for _, p := range []string{"http/json", "thrift"} {
		if _, err := newExporter(ctx, env("OTEL_EXPORTER_OTLP_PROTOCOL", p)); err == nil || !strings.Contains(err.Error(), "OTEL_EXPORTER_OTLP_PROTOCOL") {
			t.Errorf("protocol %q: %v", p, err)
		}
	}
	for _, kv := range [][]string{{}, {"OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"}, {"OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf"}} {
		e, err := newExporter(ctx, env(kv...))
		if err != nil {
			t.Fatalf("%v: %v", kv, err)
		}
		_ = e.Shutdown(ctx)
	}
}

// recorded runs one host request, with one upstream request inside it,
// through an observer whose spans a recorder keeps.
func recorded(t *testing.T, r observe.Request, out observe.Outcome, upstreamErr error) (server, client sdktrace.ReadOnlySpan, meta json.RawMessage) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	provider := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer func() { _ = provider.Shutdown(context.Background()) }()
	o := &observer{provider: provider, tracer: provider.Tracer("test")}
	ctx, end := o.Begin(context.Background(), r)
	obs := outgoing.ObserverFrom(ctx)
	if obs == nil {
		t.Fatal("the host request's ctx carries no outgoing.Observer")
	}
	added, uend := obs(ctx, outgoing.Request{Server: "notes", Method: r.Method, Params: json.RawMessage(`{"name":"echo"}`), Revision: "2025-11-25", Transport: "http"})
	meta, _ = json.Marshal(added)
	uend(out.Result, upstreamErr)
	end(out)
	spans := rec.Ended()
	if len(spans) != 2 {
		t.Fatalf("%d spans", len(spans))
	}
	return spans[1], spans[0], meta
}

func hasAttr(s sdktrace.ReadOnlySpan, key string) bool {
	for _, a := range s.Attributes() {
		if string(a.Key) == key {
			return true
		}
	}
	return false
}

func attr(s sdktrace.ReadOnlySpan, key string) string {
	for _, a := range s.Attributes() {
		if string(a.Key) == key {
			return a.Value.String()
		}
	}
	return ""
}

func TestSpans(t *testing.T) {
	host := `{"name":"mcp__notes__echo","_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}`
	r := observe.Request{Method: "tools/call", Server: "notes", Item: "mcp__notes__echo", Revision: "2025-11-25", ID: json.RawMessage(`7`), Params: json.RawMessage(host)}

	server, client, meta := recorded(t, r, observe.Outcome{Result: json.RawMessage(`{"content":[]}`)}, nil)
	if server.Name() != "tools/call mcp__notes__echo" || client.Name() != "tools/call echo" {
		t.Errorf("names %q, %q", server.Name(), client.Name())
	}
	if server.Parent().SpanID().String() != "00f067aa0ba902b7" || server.SpanContext().TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Errorf("server span's parent %v", server.Parent())
	}
	if client.Parent().SpanID() != server.SpanContext().SpanID() {
		t.Errorf("client span's parent %v", client.Parent())
	}
	if !strings.Contains(string(meta), client.SpanContext().SpanID().String()) {
		t.Errorf("the upstream _meta %s does not name the client span", meta)
	}
	if server.Status().Code != codes.Unset || attr(server, "gen_ai.operation.name") != "execute_tool" || attr(client, "network.transport") != "tcp" {
		t.Errorf("server %v %v; client %v", server.Status(), server.Attributes(), client.Attributes())
	}
	if attr(server, "jsonrpc.request.id") != "7" || hasAttr(server, "mcp.session.id") || hasAttr(client, "jsonrpc.request.id") {
		t.Errorf("the stdio host's request 7: server %v; client %v", server.Attributes(), client.Attributes())
	}
	// A request of a session, with a string id.
	inSession := r
	inSession.ID, inSession.Session, inSession.Transport = json.RawMessage(`"req-\u0031"`), "f00d", config.TransportHTTP
	server, _, _ = recorded(t, inSession, observe.Outcome{Result: json.RawMessage(`{"content":[]}`)}, nil)
	if attr(server, "jsonrpc.request.id") != "req-1" || attr(server, "mcp.session.id") != "f00d" || attr(server, "network.transport") != "tcp" {
		t.Errorf("a session's request: %v", server.Attributes())
	}

	if len(server.Links()) != 0 || hasAttr(server, "mcptrunk.code.run") {
		t.Errorf("a plain request's span has links %v or a run: %v", server.Links(), server.Attributes())
	}
	// A call a code-mode program made names its run.
	inRun := r
	inRun.ID, inRun.Run = nil, "0123abcd"
	server, _, _ = recorded(t, inRun, observe.Outcome{Result: json.RawMessage(`{"content":[]}`)}, nil)
	if attr(server, "mcptrunk.code.run") != "0123abcd" || hasAttr(server, "jsonrpc.request.id") {
		t.Errorf("a program's call: %v", server.Attributes())
	}
	// The retry of a parked call links to the call's first round.
	first := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled})
	server, _, _ = recorded(t, r, observe.Outcome{Result: json.RawMessage(`{"content":[]}`), Continues: trace.ContextWithSpanContext(context.Background(), first)}, nil)
	if links := server.Links(); len(links) != 1 || links[0].SpanContext.TraceID() != first.TraceID() || links[0].SpanContext.SpanID() != first.SpanID() {
		t.Errorf("the retry's links %v, want one to %v", links, first)
	}
	// A tool's own failure.
	server, _, _ = recorded(t, r, observe.Outcome{Result: json.RawMessage(`{"content":[],"isError":true}`)}, nil)
	if server.Status().Code != codes.Error || attr(server, "error.type") != "tool_error" {
		t.Errorf("isError: %v %v", server.Status(), server.Attributes())
	}
	// Invalid params: the caller's mistake to the server span, an error to the client's.
	invalid := &jsonrpc.Error{Code: -32602, Message: "unknown tool"}
	server, client, _ = recorded(t, r, observe.Outcome{Err: invalid}, invalid)
	if server.Status().Code != codes.Unset || attr(server, "rpc.response.status_code") != "-32602" || attr(server, "error.type") != "" {
		t.Errorf("server span of -32602: %v %v", server.Status(), server.Attributes())
	}
	if client.Status().Code != codes.Error || client.Status().Description != "unknown tool" || attr(client, "error.type") != "-32602" {
		t.Errorf("client span of -32602: %v %v", client.Status(), client.Attributes())
	}
	// Cancelled.
	server, _, _ = recorded(t, r, observe.Outcome{Err: context.Canceled}, errors.Join(context.Canceled))
	if attr(server, "error.type") != "cancelled" {
		t.Errorf("cancelled: %v", server.Attributes())
	}
}
