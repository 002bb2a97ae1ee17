package tasks

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/proxy/translate"
)

// A 2026-07-28 server whose tool requires a task makes one only for a
// client that declares the extension; a host that does not (a 2025-era
// host, most hosts) would get an error. So the trunk declares it on the
// host's behalf for that call and follows the task to its end itself:
// tasks/get at the server's suggested interval until the task is
// completed, failed or cancelled, and the host's call answered with the
// result the last tasks/get inlines.

// Poll interval bounds: the server's pollIntervalMs within them, the
// default when it suggests none.
const (
	minPoll     = 20 * time.Millisecond
	maxPoll     = 5 * time.Second
	defaultPoll = 500 * time.Millisecond
)

// Follower follows one 2026-07-28 task for a host that does not follow it
// itself.
type Follower struct {
	// Conn is the server's connection, for tasks/get, tasks/update and
	// tasks/cancel.
	Conn Caller
	// Server and Tool name the task in errors.
	Server, Tool string
	// Ask puts one of the task's input requests to the host, the way the
	// trunk puts a server's requests during a call of the host's revision
	// (nil: the host cannot be asked at all).
	Ask translate.AskHost
	// Can reports whether the host declared a client capability.
	Can func(capability string) bool
	// Owned: the host owns the task (it asked for it), so its giving up
	// on the wait does not cancel the task; Related is the host's id of it,
	// which the input requests put to the host name in their related-task
	// _meta, as a 2025-11-25 server's would.
	Owned   bool
	Related string
}

// follow is Follower.run for a host that cannot be asked for input.
func follow(ctx, life context.Context, c Caller, server string, created json.RawMessage) (json.RawMessage, error) {
	return (&Follower{Conn: c, Server: server}).run(ctx, life, created)
}

// run polls the task of created (a CreateTaskResult, or a task as
// tasks/get reports it) with tasks/get until it ends, and returns the tool
// result a completed task inlines; a failed task is its inlined error, a
// cancelled one an error saying so. A task that waits for input has its
// input requests put to the host (Ask) and the answers sent with
// tasks/update, keyed as the server asked; when the host cannot answer
// one (no Ask, or not the capability it needs) the task is cancelled with
// an error naming the server, the tool and what was missing. When ctx
// ends first the task is cancelled at the server within cancelWait of
// life, and the error is ctx's.
func (f *Follower) run(ctx, life context.Context, created json.RawMessage) (json.RawMessage, error) {
	c, server := f.Conn, f.Server
	id, _ := rawjson.StringField(created, "taskId")
	if id == "" {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInternalError, "server %q created a task without an id", server)
	}
	byID, _ := json.Marshal(map[string]string{"taskId": id})
	cancel := func() {
		if f.Owned && ctx.Err() != nil {
			return
		}
		cctx, stop := context.WithTimeout(life, cancelWait)
		defer stop()
		_, _ = c.Call(cctx, "tasks/cancel", byID)
	}
	answered := map[string]bool{} // input requests answered: a poll before the server took the update shows them again
	task := created
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		wait := interval(task)
		status, _ := rawjson.StringField(task, "status")
		switch status {
		case "completed":
			start, end, found, err := rawjson.FieldSpan(task, "result")
			if err != nil || !found {
				return nil, jsonrpc.Errorf(jsonrpc.CodeInternalError, "server %q: task %s completed without a result", server, id)
			}
			return task[start:end], nil
		case "failed":
			return nil, taskError(server, id, task)
		case "cancelled":
			return nil, jsonrpc.Errorf(jsonrpc.CodeInternalError, "server %q cancelled task %s", server, id)
		case "input_required":
			asked, err := f.answer(ctx, id, task, answered)
			if err != nil {
				cancel()
				return nil, err
			}
			if asked {
				wait = 0 // the task goes on at once
			}
		}
		if wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-ctx.Done():
				cancel()
				return nil, ctx.Err()
			}
		}
		next, err := c.Call(ctx, "tasks/get", byID)
		if err != nil {
			if ctx.Err() != nil {
				cancel()
			}
			return nil, err
		}
		task = next
	}
}

// interval is the server's suggested pollIntervalMs, within bounds.
func interval(task json.RawMessage) time.Duration {
	var t struct {
		PollIntervalMs *float64 `json:"pollIntervalMs"`
	}
	if json.Unmarshal(task, &t) != nil || t.PollIntervalMs == nil {
		return defaultPoll
	}
	return boundedPoll(*t.PollIntervalMs)
}

// boundedPoll is a server's suggested interval in milliseconds, bounded
// to what the trunk polls at.
func boundedPoll(ms float64) time.Duration {
	return min(max(time.Duration(ms)*time.Millisecond, minPoll), maxPoll)
}

// taskError is a failed task's inlined error, kept as the server's
// JSON-RPC error when it has that shape.
func taskError(server, id string, task json.RawMessage) error {
	var t struct {
		Error *jsonrpc.Error `json:"error"`
	}
	if json.Unmarshal(task, &t) == nil && t.Error != nil && t.Error.Message != "" {
		return t.Error
	}
	return fmt.Errorf("server %q: task %s failed", server, id)
}

// start creates the task (create sends the tools/call with the extension
// declared) and runs it to its end; a server that answered the call at once
// after all has its answer returned as it is.
func (f *Follower) start(ctx, life context.Context, create func(context.Context) (json.RawMessage, error)) (json.RawMessage, error) {
	created, err := create(ctx)
	if err != nil || !IsCreated(created) {
		return created, err
	}
	return f.run(ctx, life, created)
}
