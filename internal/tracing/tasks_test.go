package tracing

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcptrunk/mcptrunk/proxy/observe"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// A task's span starts when the task is created, in a trace of its own
// linked to the span of the tools/call that created it, and ends only when
// the task does, with its status.
func TestTaskSpan(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	provider := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer func() { _ = provider.Shutdown(context.Background()) }()
	o := &observer{provider: provider, tracer: provider.Tracer("test")}

	call := observe.Request{Method: "tools/call", Server: "notes", Item: "mcp__notes__slow", Session: "f00d", Subject: "alice",
		Params: json.RawMessage(`{"name":"mcp__notes__slow","_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}`)}
	ctx, endCall := o.Begin(context.Background(), call)
	endTask := o.BeginTask(ctx, observe.Task{Server: "notes", ID: "t-1", Call: call})
	endCall(observe.Outcome{Result: json.RawMessage(`{"task":{"taskId":"t-1","status":"working"}}`)})
	if n := len(rec.Ended()); n != 1 {
		t.Fatalf("%d spans ended before the task did, want the call's alone", n)
	}
	endTask(observe.TaskEnd{Status: observe.TaskFailed})

	ended := rec.Ended()
	if len(ended) != 2 {
		t.Fatalf("%d spans ended, want 2", len(ended))
	}
	callSpan, task := ended[0], ended[1]
	if task.Name() != "task mcp__notes__slow" {
		t.Errorf("task span named %q", task.Name())
	}
	if task.Parent().IsValid() || task.SpanContext().TraceID() == callSpan.SpanContext().TraceID() {
		t.Errorf("the task's span is not a root of its own trace: parent %v, trace %v", task.Parent(), task.SpanContext().TraceID())
	}
	if links := task.Links(); len(links) != 1 || links[0].SpanContext.SpanID() != callSpan.SpanContext().SpanID() {
		t.Errorf("the task's span links %v, want the call's span %v", links, callSpan.SpanContext().SpanID())
	}
	for key, want := range map[string]string{"mcptrunk.server": "notes", "mcptrunk.task.id": "t-1", "mcptrunk.task.status": "failed",
		"mcptrunk.task.driven": "false", "mcp.session.id": "f00d", "enduser.id": "alice"} {
		if got := attr(task, key); got != want {
			t.Errorf("%s = %q, want %q", key, got, want)
		}
	}
	if task.Status().Code != codes.Error {
		t.Errorf("a failed task's span has status %v", task.Status())
	}
}
