package tracing

import (
	"context"

	"github.com/mcptrunk/mcptrunk/proxy/observe"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// Attributes of a task's span.
const (
	attrTaskID     = attribute.Key("mcptrunk.task.id")     // the server's own id
	attrTaskStatus = attribute.Key("mcptrunk.task.status") // how it ended (observe.TaskEnd)
	attrTaskDriven = attribute.Key("mcptrunk.task.driven") // the trunk ran it for a host that takes no tasks
)

var _ observe.TaskObserver = (*observer)(nil)

// BeginTask starts a task's span, from when the trunk learns of the task
// to when it learns of its end. A task outlives the tools/call that
// created it, often by minutes, so its span is the root of a trace of its
// own, linked to the call's span (in ctx) rather than a child the call's
// trace would wait for.
func (o *observer) BeginTask(ctx context.Context, t observe.Task) func(observe.TaskEnd) {
	attrs := []attribute.KeyValue{attrServer.String(t.Server), attrTaskID.String(t.ID), attrTaskDriven.Bool(t.Driven)}
	if t.Call.Subject != "" {
		attrs = append(attrs, attribute.String("enduser.id", t.Call.Subject))
	}
	if t.Call.Session != "" {
		attrs = append(attrs, semconv.McpSessionID(t.Call.Session))
	}
	opts := []trace.SpanStartOption{trace.WithNewRoot(), trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...)}
	if call := trace.SpanContextFromContext(ctx); call.IsValid() {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: call}))
	}
	_, span := o.tracer.Start(ctx, spanName("task", t.Call.Item), opts...)
	return func(e observe.TaskEnd) {
		span.SetAttributes(attrTaskStatus.String(e.Status))
		if e.Status == observe.TaskFailed {
			span.SetStatus(codes.Error, e.Status)
		}
		span.End()
	}
}
