package tasks

import (
	"context"
	"fmt"
	"slices"
)

// Listener opens listens for task status: upstream.Caller's ListenTasks.
type Listener interface {
	Name() string
	ListenTasks(ctx context.Context, ids []string) (honored []string, stop func(), ended <-chan error, _ error)
}

// Listen has a 2026-07-28 server report the status of its task upID
// (notifications/tasks) on a subscriptions/listen of the trunk's, told the
// capabilities of the host request c serves (upstream.Caller), until stop: one listen per host listen and
// task, so that it ends with the host's. A server that does not agree to
// report on the task is an error, and nothing is left open. ended gets why
// the server's listen ended before stop (the server ended it, or its
// connection went: a crash, a reload), after which nothing more of the task
// is heard on it.
func Listen(ctx context.Context, c Listener, upID string) (stop func(), ended <-chan error, _ error) {
	honored, stop, ended, err := c.ListenTasks(ctx, []string{upID})
	if err != nil {
		return nil, nil, fmt.Errorf("server %q: listening for the status of a task: %w", c.Name(), err)
	}
	if !slices.Contains(honored, upID) {
		stop()
		return nil, nil, fmt.Errorf("server %q does not report the status of its task %q", c.Name(), upID)
	}
	return stop, ended, nil
}
