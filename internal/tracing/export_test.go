package tracing

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	_ "google.golang.org/grpc/encoding/gzip" // the collector takes gzip, as the OpenTelemetry Collector does
	"google.golang.org/protobuf/proto"
)

// exportSpans makes a server span under a remote parent, with every kind
// of attribute, an event, a link and an error status, sends it through
// the exporter env configures, and returns it as the SDK holds it.
func exportSpans(t *testing.T, getenv func(string) string) sdktrace.ReadOnlySpan {
	t.Helper()
	exp, err := newExporter(t.Context(), getenv)
	if err != nil {
		t.Fatal(err)
	}
	checked := &checkedExporter{SpanExporter: exp}
	rec := sdktrace.NewSimpleSpanProcessor(checked)
	keep := &lastSpan{}
	res := resource.NewSchemaless(attribute.String("service.name", "mcptrunk-test"))
	provider := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(keep), sdktrace.WithSpanProcessor(rec), sdktrace.WithResource(res))
	parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{0x4b, 0xf9, 1}, SpanID: trace.SpanID{0, 0xf0, 2},
		TraceFlags: trace.FlagsSampled, Remote: true})
	linked := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{7}, SpanID: trace.SpanID{8}, TraceFlags: trace.FlagsSampled})
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), parent)
	_, span := provider.Tracer("scope-name", trace.WithInstrumentationVersion("v9")).Start(ctx, "tools/call mcp__notes__echo",
		trace.WithSpanKind(trace.SpanKindServer), trace.WithLinks(trace.Link{SpanContext: linked}),
		trace.WithAttributes(attribute.String("s", "text"), attribute.String("empty", ""), attribute.Int64("i", -3), attribute.Bool("b", true),
			attribute.Float64("f", 0.5), attribute.StringSlice("ss", []string{"a", "b"}), attribute.Int64Slice("is", []int64{1, 2})))
	span.AddEvent("happened", trace.WithAttributes(attribute.Int("n", 1)))
	span.SetStatus(codes.Error, "unknown tool")
	span.End()
	if err := provider.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if checked.err != nil {
		t.Fatalf("export: %v", checked.err)
	}
	return keep.span
}

// checkedExporter keeps the error of the last export.
type checkedExporter struct {
	sdktrace.SpanExporter
	err error
}

func (c *checkedExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	c.err = c.SpanExporter.ExportSpans(ctx, spans)
	return c.err
}

// lastSpan is a span processor that keeps the last span ended.
type lastSpan struct{ span sdktrace.ReadOnlySpan }

func (l *lastSpan) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (l *lastSpan) OnEnd(s sdktrace.ReadOnlySpan)                   { l.span = s }
func (l *lastSpan) Shutdown(context.Context) error                  { return nil }
func (l *lastSpan) ForceFlush(context.Context) error                { return nil }

// checkExported compares the one span a collector received with the one
// the SDK ended.
func checkExported(t *testing.T, req *coltracepb.ExportTraceServiceRequest, want sdktrace.ReadOnlySpan) {
	t.Helper()
	if len(req.ResourceSpans) != 1 || len(req.ResourceSpans[0].ScopeSpans) != 1 || len(req.ResourceSpans[0].ScopeSpans[0].Spans) != 1 {
		t.Fatalf("want one resource, scope and span: %v", req)
	}
	rs := req.ResourceSpans[0]
	if a := rs.Resource.GetAttributes(); len(a) != 1 || a[0].Key != "service.name" || a[0].Value.GetStringValue() != "mcptrunk-test" {
		t.Errorf("resource %v", rs.Resource)
	}
	if sc := rs.ScopeSpans[0].Scope; sc.GetName() != "scope-name" || sc.GetVersion() != "v9" {
		t.Errorf("scope %v", sc)
	}
	got := rs.ScopeSpans[0].Spans[0]
	sc := want.SpanContext()
	if hex.EncodeToString(got.TraceId) != sc.TraceID().String() || hex.EncodeToString(got.SpanId) != sc.SpanID().String() ||
		hex.EncodeToString(got.ParentSpanId) != want.Parent().SpanID().String() {
		t.Errorf("ids %x %x parent %x, want %v parent %v", got.TraceId, got.SpanId, got.ParentSpanId, sc, want.Parent())
	}
	if got.Flags != 0x301 { // sampled, and the parent's remoteness known: remote
		t.Errorf("flags %#x, want 0x301", got.Flags)
	}
	if got.Name != want.Name() || got.Kind != tracepb.Span_SPAN_KIND_SERVER ||
		got.StartTimeUnixNano != uint64(want.StartTime().UnixNano()) || got.EndTimeUnixNano != uint64(want.EndTime().UnixNano()) {
		t.Errorf("span %q kind %v times %d %d, want %q %v %v", got.Name, got.Kind, got.StartTimeUnixNano, got.EndTimeUnixNano, want.Name(), want.StartTime(), want.EndTime())
	}
	attrs := map[string]*commonpb.AnyValue{}
	for _, kv := range got.Attributes {
		attrs[kv.Key] = kv.Value
	}
	if len(attrs) != 7 || attrs["s"].GetStringValue() != "text" || attrs["i"].GetIntValue() != -3 || !attrs["b"].GetBoolValue() ||
		attrs["f"].GetDoubleValue() != 0.5 || len(attrs["ss"].GetArrayValue().GetValues()) != 2 ||
		attrs["ss"].GetArrayValue().GetValues()[1].GetStringValue() != "b" || attrs["is"].GetArrayValue().GetValues()[1].GetIntValue() != 2 {
		t.Errorf("attributes %v", got.Attributes)
	}
	if v, ok := attrs["empty"].GetValue().(*commonpb.AnyValue_StringValue); !ok || v.StringValue != "" {
		t.Errorf("an empty string attribute arrived as %v", attrs["empty"])
	}
	if len(got.Events) != 1 || got.Events[0].Name != "happened" || got.Events[0].Attributes[0].Value.GetIntValue() != 1 {
		t.Errorf("events %v", got.Events)
	}
	if len(got.Links) != 1 || got.Links[0].TraceId[0] != 7 || got.Links[0].SpanId[0] != 8 || got.Links[0].Flags != 0x101 {
		t.Errorf("links %v", got.Links)
	}
	if got.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || got.Status.GetMessage() != "unknown tool" {
		t.Errorf("status %v", got.Status)
	}
}

// Spans reach an OTLP/HTTP collector whole, with the configured headers
// and compression.
func TestExportHTTP(t *testing.T) {
	got := make(chan *coltracepb.ExportTraceServiceRequest, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/base/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" ||
			r.Header.Get("Api-Key") != "se cret" || r.Header.Get("Content-Encoding") != "gzip" {
			http.Error(w, "unexpected request", http.StatusBadRequest)
			t.Errorf("request %s %v", r.URL.Path, r.Header)
			return
		}
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			t.Error(err)
			return
		}
		body, _ := io.ReadAll(zr)
		req := &coltracepb.ExportTraceServiceRequest{}
		if err := proto.Unmarshal(body, req); err != nil {
			t.Errorf("the export does not decode: %v", err)
		}
		got <- req
	}))
	defer srv.Close()
	want := exportSpans(t, env("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL+"/base", "OTEL_EXPORTER_OTLP_HEADERS", "api-key=se%20cret",
		"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "gzip"))
	checkExported(t, <-got, want)
}

// traceService is a gRPC collector keeping what it receives.
type traceService struct {
	coltracepb.UnimplementedTraceServiceServer
	got     chan *coltracepb.ExportTraceServiceRequest
	partial *coltracepb.ExportTracePartialSuccess // its answer's, when not nil
}

func (s *traceService) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	s.got <- req
	return &coltracepb.ExportTraceServiceResponse{PartialSuccess: s.partial}, nil
}

// Spans reach a gRPC collector (grpc-go's server) the same.
func TestExportGRPC(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	svc := &traceService{got: make(chan *coltracepb.ExportTraceServiceRequest, 1)}
	stop := serveGRPC(ln, svc)
	defer stop()

	for _, e := range []func(string) string{
		env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", "OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+ln.Addr().String()),
		env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "grpc", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", ln.Addr().String(),
			"OTEL_EXPORTER_OTLP_INSECURE", "true", "OTEL_EXPORTER_OTLP_COMPRESSION", "gzip"),
	} {
		want := exportSpans(t, e)
		checkExported(t, <-svc.got, want)
	}
}

// An encoded span has no field a decoder would not know: a re-encoding by
// the generated code is the same size.
func TestEncodeSpansRoundTrips(t *testing.T) {
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { body, _ = io.ReadAll(r.Body) }))
	defer srv.Close()
	exportSpans(t, env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", srv.URL))
	req := &coltracepb.ExportTraceServiceRequest{}
	if err := proto.Unmarshal(body, req); err != nil {
		t.Fatal(err)
	}
	again, err := proto.MarshalOptions{Deterministic: true}.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	if len(again) != len(body) || len(req.ProtoReflect().GetUnknown()) != 0 {
		t.Errorf("encoded %d bytes, the generated code %d", len(body), len(again))
	}
	if !bytes.Contains(body, []byte("tools/call mcp__notes__echo")) {
		t.Error("the span's name is not in the export")
	}
}

// serveGRPC serves svc on ln until the returned stop is called.
func serveGRPC(ln net.Listener, svc *traceService) (stop func()) {
	srv := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(srv, svc)
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	return func() { srv.Stop(); <-done }
}

// A collector's partial success (spans it rejected, and why) is an
// export error, over HTTP and over gRPC (with a gzipped answer).
func TestExportPartialSuccess(t *testing.T) {
	partial := &coltracepb.ExportTracePartialSuccess{RejectedSpans: 1, ErrorMessage: "span too old"}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{PartialSuccess: partial})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	svc := &traceService{got: make(chan *coltracepb.ExportTraceServiceRequest, 1), partial: partial}
	stop := serveGRPC(ln, svc)
	defer stop()

	for _, e := range []func(string) string{
		env("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL),
		env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", "OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+ln.Addr().String(), "OTEL_EXPORTER_OTLP_COMPRESSION", "gzip"),
	} {
		exp, err := newExporter(t.Context(), e)
		if err != nil {
			t.Fatal(err)
		}
		provider := sdktrace.NewTracerProvider()
		_, span := provider.Tracer("test").Start(context.Background(), "s")
		span.End()
		err = exp.ExportSpans(t.Context(), []sdktrace.ReadOnlySpan{span.(sdktrace.ReadOnlySpan)})
		if err == nil || !strings.Contains(err.Error(), "rejected 1 item(s): span too old") {
			t.Errorf("%s: %v, want the partial success as an error", e("OTEL_EXPORTER_OTLP_ENDPOINT"), err)
		}
		_ = exp.Shutdown(t.Context())
		_ = provider.Shutdown(t.Context())
	}
	<-svc.got
}
