package proxy

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
	"github.com/mcptrunk/mcptrunk/proxy/observe"
)

// taskWatcher is an Observer and TaskObserver that records each task
// begun, whether the context it was begun with is the creating call's (its
// Begin marks that context), and sends each end on ended.
type taskWatcher struct {
	begun  chan observe.Task
	inCall chan bool
	ended  chan observe.TaskEnd
}

func newTaskWatcher() *taskWatcher {
	return &taskWatcher{begun: make(chan observe.Task, 8), inCall: make(chan bool, 8), ended: make(chan observe.TaskEnd, 8)}
}

func (w *taskWatcher) Begin(ctx context.Context, r observe.Request) (context.Context, func(observe.Outcome)) {
	return context.WithValue(ctx, ctxMark{}, r.Method), func(observe.Outcome) {}
}

func (w *taskWatcher) BeginTask(ctx context.Context, t observe.Task) func(observe.TaskEnd) {
	w.inCall <- ctx.Value(ctxMark{}) == "tools/call"
	w.begun <- t
	return func(e observe.TaskEnd) { w.ended <- e }
}

func (w *taskWatcher) next(t *testing.T) observe.Task {
	t.Helper()
	select {
	case task := <-w.begun:
		if !<-w.inCall {
			t.Errorf("task %s was begun outside the context of the call that created it", task.ID)
		}
		return task
	case <-time.After(30 * time.Second):
		t.Fatal("no task begun")
	}
	return observe.Task{}
}

func (w *taskWatcher) end(t *testing.T) string {
	t.Helper()
	select {
	case e := <-w.ended:
		return e.Status
	case <-time.After(30 * time.Second):
		t.Fatal("no task ended")
	}
	return ""
}

// runningTasks is the trunk's status's count of server's tasks running.
func runningTasks(tr *Trunk, server string) int {
	for _, s := range tr.Status().Servers {
		if s.Server == server {
			return s.Tasks
		}
	}
	return -1
}

// A task a host creates is begun with its observers, in the call's
// context, and counted running in the status until a tasks/result the
// trunk forwards ends it; polls that find it working do not.
func TestTasksObservedToTheirEnd(t *testing.T) {
	s, _ := taskServer()
	w := newTaskWatcher()
	tr, h := memTrunk(t, memserver.Set{"slow": s}, nil, nil, &Options{Observers: []observe.Observer{w}})
	h.initialize(`{}`)
	h.tools()
	res, errObj := h.call("tools/call", `{"name":"mcp__slow__research","arguments":{},"task":{"ttl":60000}}`)
	var created struct{ Task struct{ TaskID string } }
	if err := json.Unmarshal(res, &created); err != nil || created.Task.TaskID == "" {
		t.Fatalf("tools/call with a task: %s %s", res, errObj)
	}
	task := w.next(t)
	if task.Server != "slow" || task.ID != "up-1" || task.Call.Item != "mcp__slow__research" || task.Driven {
		t.Errorf("task begun %+v, want slow's up-1 for mcp__slow__research", task)
	}
	if n := runningTasks(tr, "slow"); n != 1 {
		t.Errorf("status: %d tasks running on slow, want 1", n)
	}
	id, _ := json.Marshal(created.Task.TaskID)
	h.call("tasks/get", `{"taskId":`+string(id)+`}`) // working
	h.waitFor("notifications/tasks/status")          // working too
	if n := runningTasks(tr, "slow"); n != 1 {
		t.Errorf("after a poll: %d tasks running on slow, want 1", n)
	}
	h.call("tasks/result", `{"taskId":`+string(id)+`}`)
	if status := w.end(t); status != observe.TaskCompleted {
		t.Errorf("the task ended %q, want completed", status)
	}
	if n := runningTasks(tr, "slow"); n != 0 {
		t.Errorf("after its result: %d tasks running on slow, want none", n)
	}
}

// A task the trunk runs for a host that does not speak tasks is observed
// as driven: completed when its result comes, cancelled when the host
// gives up on the call and the trunk cancels it.
func TestTasksDrivenObserved(t *testing.T) {
	finish := make(chan struct{})
	close(finish)
	w := newTaskWatcher()
	_, h := memTrunk(t, memserver.Set{"slow": requiredTaskServer(finish, make(chan string, 1))}, nil, nil, &Options{Observers: []observe.Observer{w}})
	h.initialize(`{}`)
	h.tools()
	h.call("tools/call", `{"name":"mcp__slow__research","arguments":{}}`)
	if task := w.next(t); task.ID != "up-7" || !task.Driven {
		t.Errorf("task begun %+v, want up-7 driven", task)
	}
	if status := w.end(t); status != observe.TaskCompleted {
		t.Errorf("the driven task ended %q, want completed", status)
	}

	cancelled := make(chan string, 1)
	w = newTaskWatcher()
	tr, h := memTrunk(t, memserver.Set{"slow": requiredTaskServer(make(chan struct{}), cancelled)}, nil, nil, &Options{Observers: []observe.Observer{w}})
	h.initialize(`{}`)
	h.tools()
	h.send(`{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"mcp__slow__research","arguments":{}}}`)
	w.next(t)
	if n := runningTasks(tr, "slow"); n != 1 {
		t.Errorf("status: %d tasks running on slow, want 1", n)
	}
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c1"}}`)
	if status := w.end(t); status != observe.TaskCancelled {
		t.Errorf("the abandoned task ended %q, want cancelled", status)
	}
	if n := runningTasks(tr, "slow"); n != 0 {
		t.Errorf("after its cancellation: %d tasks running on slow, want none", n)
	}
}
