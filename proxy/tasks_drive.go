package proxy

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// A tool whose execution.taskSupport is "required" can only be called as a
// task. A host that does not ask for one (most hosts do not speak tasks)
// would get an error; so the trunk runs the task for it: it calls the tool
// with a task, waits for the result with tasks/result (which, by the
// 2025-11-25 rules, answers only once the task has ended, so nothing
// polls), and answers the host's call with that result. The whole of it is
// bounded by the server's timeouts.call; when the host cancels its call, or
// the bound passes, the task is cancelled at the server.

// cancelTaskWait bounds the tasks/cancel the trunk sends for a task it
// abandons: the host is gone or has given up, nothing waits for the answer.
const cancelTaskWait = 10 * time.Second

// drivesTask reports whether the trunk must run a call of server's tool
// raw as a task for the host: the tool requires one, the host did not ask
// for one, and the server offers tasks.
func drivesTask(c *upstream.Client, raw string, params json.RawMessage) bool {
	if rawjson.HasField(params, "task") || !offersTasks(c.Init().RawCapabilities, "") {
		return false
	}
	for _, tool := range c.Catalog().Tools {
		if tool.Key != raw {
			continue
		}
		start, end, found, err := rawjson.FieldSpan(tool.Raw, "execution")
		if err != nil || !found {
			return false
		}
		support, _ := rawjson.StringField(tool.Raw[start:end], "taskSupport")
		return support == "required"
	}
	return false
}

// driveTask calls server's tool (forward: the host's params with the
// server's name) as a task and returns the task's result.
func (t *Trunk) driveTask(ctx context.Context, c *upstream.Client, forward json.RawMessage) (json.RawMessage, error) {
	if d := c.Spec().Timeouts.Call.D(); d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	asTask, err := rawjson.ReplaceField(forward, "task", []byte(`{}`))
	if err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "tools/call: %v", err)
	}
	created, err := t.callUpstream(ctx, c, "tools/call", asTask)
	if err != nil {
		return nil, err
	}
	start, end, found, err := rawjson.FieldSpan(created, "task")
	if err != nil || !found {
		return created, nil // the server ran it at once after all
	}
	id, _ := rawjson.StringField(created[start:end], "taskId")
	if id == "" {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInternalError, "server %q created a task without an id", c.Name())
	}
	t.logger.Debug("running a task for a host that does not speak tasks", "server", c.Name())
	byID, _ := json.Marshal(map[string]string{"taskId": id})
	res, err := c.Call(ctx, "tasks/result", byID)
	if err != nil {
		if ctx.Err() != nil {
			t.cancelTask(c, byID)
		}
		return nil, err
	}
	// The related task names the server's task, which this host never saw.
	return rawjson.ReplaceReservedMeta(res, nil)
}

// cancelTask cancels a task the trunk gave up on.
func (t *Trunk) cancelTask(c *upstream.Client, byID json.RawMessage) {
	ctx, cancel := context.WithTimeout(t.life, cancelTaskWait)
	defer cancel()
	if _, err := c.Call(ctx, "tasks/cancel", byID); err != nil {
		t.logger.Warn("cancelling an abandoned task failed", "server", c.Name(), "error", err)
	}
}
