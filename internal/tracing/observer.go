package tracing

import (
	"context"
	"encoding/json"

	"github.com/mcptrunk/mcptrunk/proxy/observe"
	"github.com/mcptrunk/mcptrunk/upstream/outgoing"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// observer starts a server span for each host request, a child of the
// span the host named in params._meta (a root when it named none), and
// puts in the request's ctx what starts a client span for each request
// sent upstream on its behalf.
type observer Tracing

func (o *observer) Begin(ctx context.Context, r observe.Request) (context.Context, func(observe.Outcome)) {
	ctx = o.prop.Extract(ctx, metaReader{r.Params})
	target, attrs := requestAttrs(r.Method, r.Item, r.Revision)
	if t := networkTransport(string(r.Transport)); t.Valid() {
		attrs = append(attrs, t)
	}
	if r.Server != "" {
		attrs = append(attrs, attrServer.String(r.Server))
	}
	if id := requestID(r.ID); id != "" {
		attrs = append(attrs, semconv.JSONRPCRequestID(id))
	}
	if r.Subject != "" {
		attrs = append(attrs, attribute.String("enduser.id", r.Subject))
	}
	if r.Session != "" {
		attrs = append(attrs, semconv.McpSessionID(r.Session))
	}
	if r.Run != "" {
		attrs = append(attrs, attrCodeRun.String(r.Run))
	}
	ctx, span := o.tracer.Start(ctx, spanName(r.Method, target),
		trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
	ctx = outgoing.WithObserver(ctx, o.upstreamRequest)
	return ctx, func(out observe.Outcome) {
		if out.Continues != nil {
			// A retry of a parked call: its upstream call's span is in
			// the first round's trace.
			if first := trace.SpanContextFromContext(out.Continues); first.IsValid() {
				span.AddLink(trace.Link{SpanContext: first})
			}
		}
		endSpan(span, r.Method, out.Result, out.Err, true)
	}
}

// upstreamRequest starts the client span of one request sent upstream and
// hands its trace context on as the request's _meta, replacing any the
// host sent: the server's span is the child of the trunk's, not of the
// host's.
func (o *observer) upstreamRequest(ctx context.Context, r outgoing.Request) (map[string]json.RawMessage, func(json.RawMessage, error)) {
	target, attrs := requestAttrs(r.Method, paramsName(r.Method, r.Params), r.Revision)
	attrs = append(attrs, attrServer.String(r.Server))
	if t := networkTransport(r.Transport); t.Valid() {
		attrs = append(attrs, t)
	}
	ctx, span := o.tracer.Start(ctx, spanName(r.Method, target),
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	meta := metaWriter{}
	o.prop.Inject(ctx, meta)
	return meta, func(result json.RawMessage, err error) { endSpan(span, r.Method, result, err, false) }
}

// networkTransport is network.transport for a server's config type.
func networkTransport(t string) attribute.KeyValue {
	switch t {
	case "stdio", "":
		return semconv.NetworkTransportPipe
	case "http", "sse":
		return semconv.NetworkTransportTCP
	}
	return attribute.KeyValue{}
}
