package tracing

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcptrunk/mcptrunk/proxy/observe"
	"github.com/mcptrunk/mcptrunk/upstream/outgoing"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// BenchmarkObserver is the tracing work of one host tools/call with one
// upstream request: the two spans, their attributes and the traceparent
// handed upstream, through the SDK's batcher to an exporter that discards
// (docs/performance.md measures the whole of it, export included, end to
// end).
func BenchmarkObserver(b *testing.B) {
	provider := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	defer func() { _ = provider.Shutdown(context.Background()) }()
	o := &observer{provider: provider, tracer: provider.Tracer("bench")}
	r := observe.Request{Method: "tools/call", Server: "notes", Item: "mcp__notes__echo", Revision: "2025-11-25", ID: json.RawMessage(`7`),
		Params: json.RawMessage(`{"name":"mcp__notes__echo","arguments":{"text":"hi"}}`)}
	up := outgoing.Request{Server: "notes", Method: "tools/call", Params: json.RawMessage(`{"name":"echo","arguments":{"text":"hi"}}`), Revision: "2025-11-25", Transport: "stdio"}
	result := json.RawMessage(`{"content":[{"type":"text","text":"hi"}]}`)
	b.ReportAllocs()
	for b.Loop() {
		ctx, end := o.Begin(context.Background(), r)
		_, uend := outgoing.ObserverFrom(ctx)(ctx, up)
		uend(result, nil)
		end(observe.Outcome{Result: result})
	}
}
