package tasks

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/rawjson"
)

// A 2025-11-25 server tells its client of a task's changes with
// notifications/tasks/status; a 2026-07-28 server sends none (its client
// polls tasks/get). So for a 2025-11-25 host's task on a 2026-07-28 server
// the trunk polls for the host, as a 2025 server would notify.

// Watch follows server's task id over c with tasks/get at the task's
// interval, the first time after first (the interval its creation gave),
// and gives status each new status as a 2025-11-25 Task with the server's
// id (the params of notifications/tasks/status), until the task ends,
// owned says the host is gone, a tasks/get fails, or ctx ends.
func Watch(ctx context.Context, c Caller, server, id string, first time.Duration, owned func() bool, status func(server string, params json.RawMessage)) {
	byID, _ := json.Marshal(map[string]string{"taskId": id})
	same := func(id string) string { return id }
	last := ""
	timer := time.NewTimer(first)
	defer timer.Stop()
	for {
		select {
		case <-timer.C:
		case <-ctx.Done():
			return
		}
		if !owned() {
			return
		}
		task, err := c.Call(ctx, "tasks/get", byID)
		if err != nil {
			return
		}
		if s, _ := rawjson.StringField(task, "status"); s != last {
			last = s
			status(server, task2025(task, same))
		}
		if terminal(last) {
			return
		}
		timer.Reset(interval(task))
	}
}

// createdInterval is the poll interval a 2025-11-25 CreateTaskResult
// suggests (task.pollInterval, in milliseconds), bounded as the trunk
// polls; the default when it gives none.
func createdInterval(created json.RawMessage) time.Duration {
	var r struct {
		Task struct {
			PollInterval *float64 `json:"pollInterval"`
		} `json:"task"`
	}
	if json.Unmarshal(created, &r) != nil || r.Task.PollInterval == nil {
		return defaultPoll
	}
	return boundedPoll(*r.Task.PollInterval)
}
