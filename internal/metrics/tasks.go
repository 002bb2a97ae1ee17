package metrics

import (
	"context"

	"github.com/mcptrunk/mcptrunk/proxy/observe"
	"go.opentelemetry.io/otel/attribute"
)

// taskCounters count tasks as the trunk learns of them: created, and ended
// by outcome (observe.TaskCompleted, TaskFailed, TaskCancelled,
// TaskExpired). The tasks running now are a gauge read from the status
// (statusGauges.tasks), whose record they are.
type taskCounters struct {
	created, ended *instrument
}

func (m *Metrics) taskInstruments() {
	m.tasks.created = m.reg.newInstrument(kindCounter, "mcptrunk.tasks.created", "{task}",
		"Tasks servers created for host calls (or for the calls the trunk runs as tasks), by server.")
	m.tasks.ended = m.reg.newInstrument(kindCounter, "mcptrunk.tasks.ended", "{task}",
		"Tasks that ended, by server and outcome: completed, failed, cancelled, or expired (the trunk heard nothing of its end before its ttl).")
}

var _ observe.TaskObserver = (*Metrics)(nil)

// BeginTask counts a task created; its end counts it by outcome.
func (m *Metrics) BeginTask(_ context.Context, t observe.Task) func(observe.TaskEnd) {
	server := attribute.String("server", m.servers.label(t.Server))
	m.tasks.created.cell(attribute.NewSet(server)).add(1)
	return func(e observe.TaskEnd) {
		m.tasks.ended.cell(attribute.NewSet(server, attribute.String("outcome", e.Status))).add(1)
	}
}
