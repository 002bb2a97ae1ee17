package audit

import (
	"context"

	"github.com/mcptrunk/mcptrunk/proxy/observe"
)

// OutcomeTaskCreated is the outcome of a task's first line: a server
// created it for a tools/call. Its last line's outcome is how it ended:
// observe.TaskCompleted, TaskFailed, TaskCancelled, or TaskExpired (the
// trunk heard nothing of its end before its ttl).
const OutcomeTaskCreated = "created"

// MethodTask is the method of a task's lines: not a request, but the
// task's life, whichever requests told the trunk of it (the host's polls,
// a status notification, the trunk's own when it runs the task).
const MethodTask = "task"

var _ observe.TaskObserver = (*Log)(nil)

// BeginTask writes a task's first line, and its end the last: each with
// the server's task id, the tool the host called and who called it (the
// session and the subject, when a token proved one).
func (l *Log) BeginTask(_ context.Context, t observe.Task) func(observe.TaskEnd) {
	start := l.opts.now()
	l.enqueue(l.taskLine(start, t, OutcomeTaskCreated, 0))
	return func(e observe.TaskEnd) {
		l.enqueue(l.taskLine(l.opts.now(), t, e.Status, float64(e.Duration.Microseconds())/1000))
	}
}
