package tasks

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/proxy/observe"
)

// taskRecorder is a TaskObserver that keeps what it is told.
type taskRecorder struct {
	mu    sync.Mutex
	begun []observe.Task
	ended map[string]string // id -> status
}

func (r *taskRecorder) Begin(ctx context.Context, _ observe.Request) (context.Context, func(observe.Outcome)) {
	return ctx, func(observe.Outcome) {}
}

func (r *taskRecorder) BeginTask(_ context.Context, t observe.Task) func(observe.TaskEnd) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.begun = append(r.begun, t)
	return func(e observe.TaskEnd) {
		r.mu.Lock()
		defer r.mu.Unlock()
		if _, twice := r.ended[t.ID]; twice {
			panic("task " + t.ID + " ended twice")
		}
		r.ended[t.ID] = e.Status
	}
}

func (r *taskRecorder) endedNow() map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.ended)
}

// newTestLedger is a ledger on a clock the test moves.
func newTestLedger() (*Ledger, *taskRecorder, *time.Time) {
	rec := &taskRecorder{ended: map[string]string{}}
	l := NewLedger(observe.Observers{rec})
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	l.now = func() time.Time { return now }
	return l, rec, &now
}

func created(id string, extra string) json.RawMessage {
	return json.RawMessage(`{"task":{"taskId":"` + id + `","status":"working"` + extra + `}}`)
}

// Each way the trunk hears of a task's end ends its record with the status
// it says, once; what tells nothing of the end leaves it running.
func TestLedgerHearsEnds(t *testing.T) {
	l, rec, _ := newTestLedger()
	for _, id := range []string{"get", "result", "failed", "cancel", "note", "poll", "unknown-id"} {
		if got := l.Created(context.Background(), "notes", created(id, ""), false); got != id {
			t.Fatalf("Created = %q, want %q", got, id)
		}
	}
	l.Heard("notes", "get", "tasks/get", json.RawMessage(`{"taskId":"get","status":"completed"}`), nil)
	l.Heard("notes", "result", "tasks/result", json.RawMessage(`{"content":[]}`), nil)
	l.Heard("notes", "failed", "tasks/result", json.RawMessage(`{"content":[],"isError":true}`), nil)
	l.Heard("notes", "cancel", "tasks/cancel", json.RawMessage(`{}`), nil)
	l.Heard("notes", "note", StatusMethod, json.RawMessage(`{"taskId":"note","status":"failed"}`), nil)
	l.Heard("notes", "poll", "tasks/get", json.RawMessage(`{"taskId":"poll","status":"input_required"}`), nil)
	l.Heard("notes", "unknown-id", "tasks/result", nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "no such task"})
	l.Heard("notes", "get", "tasks/result", json.RawMessage(`{"content":[]}`), nil) // ended already: ignored
	l.Heard("weather", "poll", "tasks/cancel", json.RawMessage(`{}`), nil)          // another server's id
	want := map[string]string{"get": "completed", "result": "completed", "failed": "failed", "cancel": "cancelled", "note": "failed"}
	if got := rec.endedNow(); !maps.Equal(got, want) {
		t.Errorf("ended %v, want %v", got, want)
	}
	if got := l.Running(); !maps.Equal(got, map[string]int{"notes": 2}) {
		t.Errorf("running %v, want notes' poll and unknown-id", got)
	}
	if l.Created(context.Background(), "notes", json.RawMessage(`{"content":[]}`), false) != "" || len(rec.begun) != 7 {
		t.Errorf("a plain result was taken for a task: %d begun", len(rec.begun))
	}
}

// The trunk's own follow-up of a task (Watch) is heard as a forwarded
// one, and a task created finished is ended at once.
func TestLedgerWatchAndDone(t *testing.T) {
	l, rec, _ := newTestLedger()
	l.Created(context.Background(), "notes", json.RawMessage(`{"resultType":"task","taskId":"v2","status":"working"}`), true)
	l.Created(context.Background(), "notes", json.RawMessage(`{"resultType":"task","taskId":"quick","status":"completed","result":{}}`), true)
	c := l.Watch("notes", callerFunc(func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"taskId":"v2","status":"cancelled"}`), nil
	}))
	if _, err := c.Call(context.Background(), "tasks/get", json.RawMessage(`{"taskId":"v2"}`)); err != nil {
		t.Fatal(err)
	}
	if got := rec.endedNow(); !maps.Equal(got, map[string]string{"v2": "cancelled", "quick": "completed"}) {
		t.Errorf("ended %v", got)
	}
	if !rec.begun[0].Driven || len(l.Running()) != 0 {
		t.Errorf("begun %+v, running %v", rec.begun, l.Running())
	}
}

type callerFunc func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)

func (f callerFunc) Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return f(ctx, method, params)
}

// Tasks still running when the trunk stops end then, as expired, each
// once; one that had ended is not ended again.
func TestLedgerClose(t *testing.T) {
	l, rec, _ := newTestLedger()
	l.Created(context.Background(), "notes", created("done", ""), false)
	l.Created(context.Background(), "notes", created("running", ""), false)
	l.Created(context.Background(), "weather", created("also", ""), false)
	l.ended("notes", "done", observe.TaskCompleted)
	l.Close()
	got := rec.endedNow()
	if len(got) != 3 || got["done"] != observe.TaskCompleted || got["running"] != observe.TaskExpired || got["also"] != observe.TaskExpired {
		t.Errorf("ended %v, want done completed, running and also expired at the close", got)
	}
	if n := len(l.Running()); n != 0 {
		t.Errorf("%d servers with tasks running after the close", n)
	}
}

// A task the trunk hears no end of expires at its ttl (maxTTL when it has
// none or a longer one), and no more than maxTracked are kept: a new one
// expires the one nearest its deadline.
func TestLedgerBounded(t *testing.T) {
	l, rec, now := newTestLedger()
	l.Created(context.Background(), "notes", created("short", `,"ttl":60000`), false)
	l.Created(context.Background(), "notes", created("none", `,"ttl":null`), false)
	l.Created(context.Background(), "notes", created("huge", `,"ttl":1e300`), false)
	*now = now.Add(time.Minute - time.Nanosecond)
	if len(rec.endedNow()) != 0 || l.Running()["notes"] != 3 {
		t.Fatalf("before any ttl: ended %v, running %v", rec.endedNow(), l.Running())
	}
	*now = now.Add(time.Nanosecond)
	if got := l.Running(); got["notes"] != 2 || rec.endedNow()["short"] != observe.TaskExpired {
		t.Fatalf("at the ttl: running %v, ended %v", got, rec.endedNow())
	}
	*now = now.Add(maxTTL)
	if got := l.Running(); len(got) != 0 || len(rec.endedNow()) != 3 {
		t.Fatalf("after MaxTTL: running %v, ended %v", got, rec.endedNow())
	}

	l, rec, now = newTestLedger()
	for i := range maxTracked {
		// Each one later than the last, so the first is nearest its deadline.
		l.Created(context.Background(), "notes", created(fmt.Sprint(i), ""), false)
		*now = now.Add(time.Millisecond)
	}
	l.Created(context.Background(), "notes", created("one-more", ""), false)
	if got := l.Running()["notes"]; got != maxTracked {
		t.Errorf("%d tasks kept, want at most %d", got, maxTracked)
	}
	if got := rec.endedNow(); len(got) != 1 || got["0"] != observe.TaskExpired {
		t.Errorf("ended %v, want the oldest expired to make room", got)
	}
}

// Runs says whether a server has a task recorded running: until its end
// is heard, or its ttl passes.
func TestLedgerRuns(t *testing.T) {
	l, _, now := newTestLedger()
	l.Created(context.Background(), "notes", created("a", `,"ttl":60000`), false)
	l.Created(context.Background(), "notes", created("b", `,"ttl":1000`), false)
	if !l.Runs("notes") || l.Runs("weather") {
		t.Fatalf("Runs: notes %v, weather %v; want true, false", l.Runs("notes"), l.Runs("weather"))
	}
	l.ended("notes", "a", observe.TaskCompleted)
	if !l.Runs("notes") {
		t.Fatal("notes' task b ended with a")
	}
	*now = now.Add(2 * time.Second) // b's ttl
	if l.Runs("notes") {
		t.Error("notes still runs a task past its ttl")
	}
}

// A call that may create a task counts as work at its server from Expect
// until done, each call on its own, so that the server is never idle
// between its answer and the record of the task it created.
func TestLedgerExpect(t *testing.T) {
	l, _, _ := newTestLedger()
	first, second := l.Expect("notes"), l.Expect("notes")
	if !l.Runs("notes") || l.Runs("weather") {
		t.Fatalf("Runs with calls expected: notes %v, weather %v; want true, false", l.Runs("notes"), l.Runs("weather"))
	}
	first()
	if !l.Runs("notes") {
		t.Fatal("the second expected call no longer counts once the first is done")
	}
	l.Created(context.Background(), "notes", created("a", `,"ttl":60000`), false)
	second()
	if !l.Runs("notes") {
		t.Fatal("the task the call created does not count once the call is done")
	}
	l.ended("notes", "a", observe.TaskCompleted)
	if l.Runs("notes") {
		t.Error("notes runs with no call expected and no task")
	}
}
