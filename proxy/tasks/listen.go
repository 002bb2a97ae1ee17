package tasks

import (
	"context"
	"fmt"
	"slices"
)

// Listener opens listens for task status: upstream.Client's ListenTasks.
type Listener interface {
	Name() string
	ListenTasks(ctx context.Context, ids []string) ([]string, func(), error)
}

// Listen has a 2026-07-28 server report the status of its task upID
// (notifications/tasks) on a subscriptions/listen of the trunk's, told the
// capabilities of ctx's host, until stop: one listen per host listen and
// task, so that it ends with the host's. A server that does not agree to
// report on the task is an error, and nothing is left open.
func Listen(ctx context.Context, c Listener, upID string) (stop func(), _ error) {
	honored, stop, err := c.ListenTasks(ctx, []string{upID})
	if err != nil {
		return nil, fmt.Errorf("server %q: listening for the status of a task: %w", c.Name(), err)
	}
	if !slices.Contains(honored, upID) {
		stop()
		return nil, fmt.Errorf("server %q does not report the status of its task %q", c.Name(), upID)
	}
	return stop, nil
}
