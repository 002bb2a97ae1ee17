package metrics

import (
	"context"

	"github.com/mcptrunk/mcptrunk/proxy/observe"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// taskCounters count tasks as the trunk learns of them: created, and ended
// by outcome (observe.TaskCompleted, TaskFailed, TaskCancelled,
// TaskExpired). The tasks running now are a gauge read from the status
// (statusGauges.tasks), whose record they are.
type taskCounters struct {
	created, ended metric.Int64Counter
}

func (m *Metrics) taskInstruments() error {
	var err1, err2 error
	m.tasks.created, err1 = m.meter.Int64Counter("mcptrunk.tasks.created", metric.WithUnit("{task}"),
		metric.WithDescription("Tasks servers created for host calls (or for the calls the trunk runs as tasks), by server."))
	m.tasks.ended, err2 = m.meter.Int64Counter("mcptrunk.tasks.ended", metric.WithUnit("{task}"),
		metric.WithDescription("Tasks that ended, by server and outcome: completed, failed, cancelled, or expired (the trunk heard nothing of its end before its ttl)."))
	if err1 != nil {
		return err1
	}
	return err2
}

var _ observe.TaskObserver = (*Metrics)(nil)

// BeginTask counts a task created; its end counts it by outcome.
func (m *Metrics) BeginTask(ctx context.Context, t observe.Task) func(observe.TaskEnd) {
	server := attribute.String("server", m.servers.label(t.Server))
	m.tasks.created.Add(ctx, 1, metric.WithAttributes(server))
	return func(e observe.TaskEnd) {
		m.tasks.ended.Add(context.Background(), 1, metric.WithAttributes(server, attribute.String("outcome", e.Status)))
	}
}
