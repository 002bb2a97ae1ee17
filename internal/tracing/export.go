package tracing

import (
	"context"
	"fmt"
	"sync"

	"github.com/mcptrunk/mcptrunk/internal/otlp"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// exporter sends spans to an OTLP collector (internal/otlp), the SDK's
// batch processor calling it.
type exporter struct {
	client *otlp.Client

	mu      sync.Mutex
	stopped bool
}

var _ sdktrace.SpanExporter = (*exporter)(nil)

// newExporter is the OTLP exporter the environment configures
// (otlp.ConfigFromEnv): http/protobuf by default, or grpc.
func newExporter(_ context.Context, getenv func(string) string) (sdktrace.SpanExporter, error) {
	cfg, err := otlp.ConfigFromEnv(otlp.Traces, getenv)
	if err != nil {
		return nil, fmt.Errorf("traces: %w", err)
	}
	return &exporter{client: otlp.NewClient(cfg)}, nil
}

func (e *exporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	e.mu.Lock()
	stopped := e.stopped
	e.mu.Unlock()
	if stopped || len(spans) == 0 {
		return nil
	}
	return e.client.Send(ctx, encodeSpans(spans))
}

func (e *exporter) Shutdown(context.Context) error {
	e.mu.Lock()
	e.stopped = true
	e.mu.Unlock()
	e.client.Close()
	return nil
}

// encodeSpans is the ExportTraceServiceRequest of spans, grouped by
// resource and then by instrumentation scope as OTLP nests them.
func encodeSpans(spans []sdktrace.ReadOnlySpan) []byte {
	type scopeKey struct {
		res   *resource.Resource
		scope instrumentation.Scope
	}
	var resources []*resource.Resource
	scopes := map[*resource.Resource][]instrumentation.Scope{}
	byScope := map[scopeKey][]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		k := scopeKey{s.Resource(), s.InstrumentationScope()}
		if _, ok := scopes[k.res]; !ok {
			resources = append(resources, k.res)
		}
		if _, ok := byScope[k]; !ok {
			scopes[k.res] = append(scopes[k.res], k.scope)
		}
		byScope[k] = append(byScope[k], s)
	}
	var e otlp.Encoder
	for _, res := range resources {
		e.Message(1, func(e *otlp.Encoder) { // ResourceSpans
			e.Resource(1, res)
			for _, sc := range scopes[res] {
				e.Message(2, func(e *otlp.Encoder) { // ScopeSpans
					e.Scope(1, sc)
					for _, s := range byScope[scopeKey{res, sc}] {
						e.Message(2, func(e *otlp.Encoder) { encodeSpan(e, s) })
					}
					e.String(3, sc.SchemaURL)
				})
			}
			e.String(3, res.SchemaURL())
		})
	}
	return e.Bytes()
}

// Span flags: the W3C trace flags in the low byte, and whether the
// parent (or a link's span) is remote.
const (
	flagHasIsRemote = 0x100
	flagIsRemote    = 0x200
)

// linkFlags are a link's flags: its span's trace flags, and whether that
// span is remote.
func linkFlags(sc trace.SpanContext) uint32 {
	f := uint32(sc.TraceFlags()) | flagHasIsRemote
	if sc.IsRemote() {
		f |= flagIsRemote
	}
	return f
}

// encodeSpan writes the members of an opentelemetry.proto.trace.v1.Span.
func encodeSpan(e *otlp.Encoder, s sdktrace.ReadOnlySpan) {
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	e.BytesField(1, tid[:])
	e.BytesField(2, sid[:])
	e.String(3, sc.TraceState().String())
	flags := uint32(sc.TraceFlags()) | flagHasIsRemote
	if p := s.Parent(); p.IsValid() {
		psid := p.SpanID()
		e.BytesField(4, psid[:])
		if p.IsRemote() {
			flags |= flagIsRemote
		}
	}
	e.String(5, s.Name())
	e.Uint(6, uint64(s.SpanKind()))
	e.Fixed64(7, uint64(s.StartTime().UnixNano()))
	e.Fixed64(8, uint64(s.EndTime().UnixNano()))
	e.KeyValues(9, s.Attributes())
	e.Uint(10, uint64(s.DroppedAttributes()))
	for _, ev := range s.Events() {
		e.Message(11, func(e *otlp.Encoder) {
			e.Fixed64(1, uint64(ev.Time.UnixNano()))
			e.String(2, ev.Name)
			e.KeyValues(3, ev.Attributes)
			e.Uint(4, uint64(ev.DroppedAttributeCount))
		})
	}
	e.Uint(12, uint64(s.DroppedEvents()))
	for _, l := range s.Links() {
		e.Message(13, func(e *otlp.Encoder) {
			ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
			e.BytesField(1, ltid[:])
			e.BytesField(2, lsid[:])
			e.String(3, l.SpanContext.TraceState().String())
			e.KeyValues(4, l.Attributes)
			e.Uint(5, uint64(l.DroppedAttributeCount))
			e.Fixed32(6, linkFlags(l.SpanContext))
		})
	}
	e.Uint(14, uint64(s.DroppedLinks()))
	if st := s.Status(); st.Code != 0 || st.Description != "" {
		e.Message(15, func(e *otlp.Encoder) {
			e.String(2, st.Description)
			// OTLP's StatusCode: UNSET 0, OK 1, ERROR 2.
			var code uint64
			switch st.Code {
			case codes.Ok:
				code = 1
			case codes.Error:
				code = 2
			}
			e.Uint(3, code)
		})
	}
	e.Fixed32(16, flags)
}
