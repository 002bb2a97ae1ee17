package tasks

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
)

// A tool whose execution.taskSupport is "required" can only be called as a
// task. A host that does not ask for one (most hosts do not speak tasks)
// would get an error; so the trunk runs the task for it: it calls the tool
// with a task, waits for the result with tasks/result (which, by the
// 2025-11-25 rules, answers only once the task has ended, so nothing
// polls), and answers the host's call with that result.

// cancelWait bounds the tasks/cancel sent for a task the trunk abandons:
// the host is gone or has given up, nothing waits for the answer.
const cancelWait = 10 * time.Second

// drive is one task the trunk runs for a host.
type drive struct {
	// Server names the server in errors.
	Server string
	// Create sends the tools/call that creates the task (the trunk's
	// observed path to the server).
	Create func(ctx context.Context, params json.RawMessage) (json.RawMessage, error)
	// Server's connection, for tasks/result and tasks/cancel.
	Conn Caller
	// Abandoned is called with the error of a tasks/cancel that failed.
	Abandoned func(error)
}

// run calls the tool (forward: the host's params with the server's name)
// as a task and returns the task's result. When ctx ends first, the task is
// cancelled at the server within cancelWait of life, the context of the
// trunk (ctx has ended by then).
func (d *drive) run(ctx, life context.Context, forward json.RawMessage) (json.RawMessage, error) {
	asTask, err := rawjson.ReplaceField(forward, "task", []byte(`{}`))
	if err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "tools/call: %v", err)
	}
	created, err := d.Create(ctx, asTask)
	if err != nil {
		return nil, err
	}
	start, end, found, err := rawjson.FieldSpan(created, "task")
	if err != nil || !found {
		return created, nil // the server ran it at once after all
	}
	id, _ := rawjson.StringField(created[start:end], "taskId")
	if id == "" {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInternalError, "server %q created a task without an id", d.Server)
	}
	byID, _ := json.Marshal(map[string]string{"taskId": id})
	res, err := d.Conn.Call(ctx, "tasks/result", byID)
	if err != nil {
		if ctx.Err() != nil {
			d.cancel(life, byID)
		}
		return nil, err
	}
	// The related task names the server's task, which the host never saw.
	return rawjson.ReplaceReservedMeta(res, nil)
}

// cancel cancels a task the trunk gave up on.
func (d *drive) cancel(life context.Context, byID json.RawMessage) {
	ctx, cancel := context.WithTimeout(life, cancelWait)
	defer cancel()
	if _, err := d.Conn.Call(ctx, "tasks/cancel", byID); err != nil && d.Abandoned != nil {
		d.Abandoned(fmt.Errorf("cancelling an abandoned task: %w", err))
	}
}

// bound is ctx ended after timeout (a server's timeouts.call; 0: never).
func bound(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, timeout)
}
