package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// tracedUpstream is an HTTP MCP server (the go-sdk's) whose echo tool
// starts a span from the trace context its request carries in _meta,
// exported to the same receiver as the trunk's, and which remembers the
// traceparent header of each tools/call POST.
type tracedUpstream struct {
	srv      *httptest.Server
	provider *sdktrace.TracerProvider
	mu       sync.Mutex
	headers  []string // traceparent of each tools/call POST
	metas    []string // traceparent of each tools/call's _meta
}

func startTracedUpstream(t *testing.T, ctx context.Context, receiver *otlpReceiver) *tracedUpstream {
	t.Helper()
	exporter, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(receiver.tracesURL()))
	if err != nil {
		t.Fatal(err)
	}
	u := &tracedUpstream{provider: sdktrace.NewTracerProvider(sdktrace.WithSyncer(exporter),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "traced-upstream"))))}
	t.Cleanup(func() { _ = u.provider.Shutdown(context.Background()) })
	tracer := u.provider.Tracer("traced-upstream")

	server := mcp.NewServer(&mcp.Implementation{Name: "traced", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "echo", Description: "echoes text"},
		func(ctx context.Context, req *mcp.CallToolRequest, in struct {
			Text string `json:"text"`
		}) (*mcp.CallToolResult, any, error) {
			carrier := propagation.MapCarrier{}
			for _, k := range []string{"traceparent", "tracestate"} {
				if v, ok := req.Params.Meta[k].(string); ok {
					carrier[k] = v
				}
			}
			u.mu.Lock()
			u.metas = append(u.metas, carrier["traceparent"])
			u.mu.Unlock()
			ctx = propagation.TraceContext{}.Extract(ctx, carrier)
			_, span := tracer.Start(ctx, "tools/call echo", trace.WithSpanKind(trace.SpanKindServer))
			span.End()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			if bytes.Contains(body, []byte(`"tools/call"`)) {
				u.mu.Lock()
				u.headers = append(u.headers, r.Header.Get("traceparent"))
				u.mu.Unlock()
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

// TestTraceRunsHostTrunkServer: a host's tools/call carrying a
// traceparent in _meta, through `mcptrunk serve` with an OTLP endpoint
// set, to an HTTP upstream, gives one trace with the host's trace id: the
// trunk's server span (child of the host's span), its client span for the
// upstream request (child of that), and the upstream's own span (child of
// the client span), which the trunk's traceparent reached in _meta and in
// the HTTP header alike.
func TestTraceRunsHostTrunkServer(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	receiver := startOTLPReceiver(t)
	up := startTracedUpstream(t, ctx, receiver)
	cfg := writeConfig(t, map[string]server{"traced": {"type": "http", "url": up.srv.URL}}, nil)

	cmd := trunkCmd(newTag(t), "serve", "--config", cfg)
	cmd.Env = append(cmd.Env,
		"OTEL_EXPORTER_OTLP_ENDPOINT=",
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="+receiver.tracesURL(),
		"OTEL_SDK_DISABLED=", "OTEL_TRACES_EXPORTER=", "OTEL_TRACES_SAMPLER=",
		"OTEL_BSP_SCHEDULE_DELAY=20")
	c := startRaw(t, "mcptrunk", cmd)
	defer c.shutdown(10 * time.Second)
	c.initialize(ctx)
	c.list(ctx, "tools/list", "tools")

	const hostTrace, hostSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	res := c.result(ctx, "tools/call", map[string]any{
		"name": "mcp__traced__echo", "arguments": map[string]any{"text": "hi"},
		"_meta": map[string]any{"traceparent": "00-" + hostTrace + "-" + hostSpan + "-01", "tracestate": "host=1"},
	})
	if !strings.Contains(string(res), `"hi"`) {
		t.Fatalf("tools/call result: %s", res)
	}
	callID := strconv.FormatInt(c.nextID.Load(), 10) // the id the call was sent with

	var trunkServer, trunkClient, upstreamServer *tracepb.Span
	err := eventually(ctx, 20*time.Millisecond, func() error {
		trunkServer, trunkClient, upstreamServer = nil, nil, nil
		for _, s := range receiver.received() {
			if hex.EncodeToString(s.span.GetTraceId()) != hostTrace {
				continue
			}
			switch {
			case s.service == "traced-upstream":
				upstreamServer = s.span
			case s.service == "mcptrunk" && s.span.GetKind() == tracepb.Span_SPAN_KIND_SERVER:
				trunkServer = s.span
			case s.service == "mcptrunk" && s.span.GetKind() == tracepb.Span_SPAN_KIND_CLIENT:
				trunkClient = s.span
			}
		}
		if trunkServer == nil || trunkClient == nil || upstreamServer == nil {
			return fmt.Errorf("spans of trace %s: trunk server %v, trunk client %v, upstream %v; all received: %d",
				hostTrace, trunkServer != nil, trunkClient != nil, upstreamServer != nil, len(receiver.received()))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%v\nstderr:\n%s", err, tail(c.stderr.String(), 3000))
	}

	parent := func(s *tracepb.Span) string { return hex.EncodeToString(s.GetParentSpanId()) }
	id := func(s *tracepb.Span) string { return hex.EncodeToString(s.GetSpanId()) }
	if parent(trunkServer) != hostSpan {
		t.Errorf("the trunk's span has parent %s, want the host's %s", parent(trunkServer), hostSpan)
	}
	if parent(trunkClient) != id(trunkServer) {
		t.Errorf("the upstream request's span has parent %s, want the trunk's %s", parent(trunkClient), id(trunkServer))
	}
	if parent(upstreamServer) != id(trunkClient) {
		t.Errorf("the upstream's span has parent %s, want the trunk's client span %s", parent(upstreamServer), id(trunkClient))
	}
	for span, want := range map[*tracepb.Span]map[string]string{
		trunkServer: {"mcp.method.name": "tools/call", "gen_ai.tool.name": "mcp__traced__echo", "gen_ai.operation.name": "execute_tool",
			"mcptrunk.server": "traced", "mcp.protocol.version": "2025-11-25", "network.transport": "pipe",
			"jsonrpc.request.id": callID, "mcp.session.id": ""},
		trunkClient: {"mcp.method.name": "tools/call", "gen_ai.tool.name": "echo", "mcptrunk.server": "traced", "network.transport": "tcp"},
	} {
		for k, v := range want {
			if got := spanAttr(span, k); got != v {
				t.Errorf("span %q: %s = %q, want %q", span.GetName(), k, got, v)
			}
		}
	}
	if trunkServer.GetName() != "tools/call mcp__traced__echo" || trunkClient.GetName() != "tools/call echo" {
		t.Errorf("span names %q, %q", trunkServer.GetName(), trunkClient.GetName())
	}

	wantParent := "00-" + hostTrace + "-" + id(trunkClient) + "-01"
	up.mu.Lock()
	defer up.mu.Unlock()
	if len(up.metas) != 1 || up.metas[0] != wantParent {
		t.Errorf("traceparent in the upstream's _meta: %q, want [%s]", up.metas, wantParent)
	}
	if len(up.headers) != 1 || up.headers[0] != wantParent {
		t.Errorf("traceparent header of the upstream's POST: %q, want [%s]", up.headers, wantParent)
	}
}

// TestTraceParkedExchange: a 2026-07-28 host's call to a 2025 server that
// asks for input is two host requests (the call, then its retry with the
// answer), each with a trace of its own, while the upstream's call runs
// across both. Its client span is in the first round's trace, the child
// of that round's server span, and ends with the result; the retry's
// server span links to the first round's.
func TestTraceParkedExchange(t *testing.T) {
	ctx := testCtx(t, 90*time.Second)
	receiver := startOTLPReceiver(t)
	cfg := writeConfig(t, map[string]server{
		"rev2025": {"command": conformanceBin(t), "protocolVersion": "2025-11-25"},
	}, map[string]any{"startupWait": "60s"})
	cmd := trunkCmd(newTag(t), "serve", "--config", cfg)
	cmd.Env = append(cmd.Env,
		"OTEL_EXPORTER_OTLP_ENDPOINT=",
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="+receiver.tracesURL(),
		"OTEL_SDK_DISABLED=", "OTEL_TRACES_EXPORTER=", "OTEL_TRACES_SAMPLER=",
		"OTEL_BSP_SCHEDULE_DELAY=20")
	host := startRaw(t, "mcptrunk", cmd)
	defer host.shutdown(10 * time.Second)

	const trace1, span1 = "11111111111111111111111111111111", "1111111111111111"
	const trace2, span2 = "22222222222222222222222222222222", "2222222222222222"
	meta := func(trace, span string) map[string]any {
		m := statelessMeta(`{"elicitation":{}}`)
		m["traceparent"] = "00-" + trace + "-" + span + "-01"
		return m
	}
	host.result(ctx, "server/discover", map[string]any{"_meta": statelessMeta(`{"elicitation":{}}`)})
	args := map[string]any{"message": "Who are you?"}
	var ir inputRequiredResult
	first := host.result(ctx, "tools/call", map[string]any{"name": "mcp__rev2025__test_elicitation", "arguments": args, "_meta": meta(trace1, span1)})
	if err := json.Unmarshal(first, &ir); err != nil || ir.ResultType != "input_required" {
		t.Fatalf("first round: %s (%v)", first, err)
	}
	answer := map[string]any{firstKey(ir): map[string]any{"action": "accept", "content": map[string]any{"username": "ada"}}}
	done := host.result(ctx, "tools/call", map[string]any{"name": "mcp__rev2025__test_elicitation", "arguments": args,
		"inputResponses": answer, "requestState": ir.RequestState, "_meta": meta(trace2, span2)})
	if !strings.Contains(string(done), "ada") {
		t.Fatalf("the retry's result: %s", done)
	}

	var round1, round2, client *tracepb.Span
	err := eventually(ctx, 20*time.Millisecond, func() error {
		round1, round2, client = nil, nil, nil
		for _, s := range receiver.received() {
			if s.service != "mcptrunk" || !strings.HasPrefix(s.span.GetName(), "tools/call") {
				continue
			}
			switch trace := hex.EncodeToString(s.span.GetTraceId()); {
			case s.span.GetKind() == tracepb.Span_SPAN_KIND_CLIENT:
				client = s.span
			case trace == trace1:
				round1 = s.span
			case trace == trace2:
				round2 = s.span
			}
		}
		if round1 == nil || round2 == nil || client == nil {
			return fmt.Errorf("spans: round 1 %v, round 2 %v, the upstream call %v", round1 != nil, round2 != nil, client != nil)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%v\nstderr:\n%s", err, tail(host.stderr.String(), 3000))
	}
	id := func(s *tracepb.Span) string { return hex.EncodeToString(s.GetSpanId()) }
	if hex.EncodeToString(round1.GetParentSpanId()) != span1 || hex.EncodeToString(round2.GetParentSpanId()) != span2 {
		t.Errorf("the rounds' parents: %x, %x; want the host's %s, %s", round1.GetParentSpanId(), round2.GetParentSpanId(), span1, span2)
	}
	if hex.EncodeToString(client.GetTraceId()) != trace1 || hex.EncodeToString(client.GetParentSpanId()) != id(round1) || client.GetName() != "tools/call test_elicitation" {
		t.Errorf("the upstream call's span %q: trace %x parent %x; want trace %s, parent the first round's %s",
			client.GetName(), client.GetTraceId(), client.GetParentSpanId(), trace1, id(round1))
	}
	if client.GetEndTimeUnixNano() < round2.GetStartTimeUnixNano() {
		t.Error("the upstream call's span ended before the retry that got its result began")
	}
	links := round2.GetLinks()
	if len(links) != 1 || hex.EncodeToString(links[0].GetTraceId()) != trace1 || hex.EncodeToString(links[0].GetSpanId()) != id(round1) {
		t.Errorf("the retry's links %v, want one to the first round's span %s", links, id(round1))
	}
	if len(round1.GetLinks()) != 0 {
		t.Errorf("the first round links to %v", round1.GetLinks())
	}
}
