package observe

import (
	"context"
	"time"
)

// A task outlives the request that created it: the tools/call is answered
// at once with the task, which runs on at the server until it completes,
// fails or is cancelled. An operator wants to see it as one unit (a span,
// counts, audit lines), so an Observer may also be a TaskObserver, told
// of each task when the trunk learns of it and again when the trunk learns
// it ended (proxy/tasks.Ledger keeps the tasks in between).

// TaskObserver is an Observer that is also told of tasks. BeginTask runs on
// the goroutine of the request that created the task, with that request's
// context (the one the Observer's Begin returned: a tracer links the task's
// span to the call's); the function it returns runs once when the task
// ends, on whichever goroutine learns it. Both must be quick.
type TaskObserver interface {
	BeginTask(ctx context.Context, t Task) func(TaskEnd)
}

// Task is one task a server created for a tools/call.
type Task struct {
	// Server is the server running the task, ID its own id for it (not the
	// id the host was given, which is a token bound to the host's session:
	// the server's id is the one its logs name).
	Server, ID string
	// Call is the tools/call that created it as its observers saw it (its
	// Item the tool as the host named it, its session, subject, client);
	// ID and Params are cleared. Empty when no observer saw the call.
	Call Request
	// Driven says the trunk itself runs the task to its end, for a host
	// that does not take tasks (the host's call waits for its result).
	Driven bool
}

// Task statuses as TaskEnd reports them: the three terminal statuses of
// MCP, and TaskExpired for a task whose end the trunk never heard of
// before its ttl passed (or that made room for newer ones, or was still
// running when the trunk stopped).
const (
	TaskCompleted = "completed"
	TaskFailed    = "failed"
	TaskCancelled = "cancelled"
	TaskExpired   = "expired"
)

// TaskEnd is how a task ended, as far as the trunk learnt it.
type TaskEnd struct {
	Status string // one of the Task statuses above
	// Duration is from the trunk's learning of the task to its learning of
	// the end: a task polled now and then ends up to a poll late.
	Duration time.Duration
}

// BeginTask begins t with every observer that is a TaskObserver, ending
// them in reverse order.
func (os Observers) BeginTask(ctx context.Context, t Task) func(TaskEnd) {
	var ends []func(TaskEnd)
	for _, o := range os {
		if to, ok := o.(TaskObserver); ok {
			ends = append(ends, to.BeginTask(ctx, t))
		}
	}
	return func(e TaskEnd) {
		for i := len(ends) - 1; i >= 0; i-- {
			ends[i](e)
		}
	}
}

// handling is what a request's ctx carries while it is observed: the
// request, for what it creates and outlives it (a task), and what handling
// it adds to its Outcome beyond the result. It rides in the ctx, as a
// trace does, because only observers read it: nothing the trunk answers or
// sends depends on it.
type handling struct {
	req       Request
	continues context.Context
}

type handlingKey struct{}

// Handling returns ctx carrying r, the request handled under it, and the
// function that reads, once it is handled, the Continues it was noted with
// (NoteContinues).
func Handling(ctx context.Context, r Request) (context.Context, func() context.Context) {
	h := &handling{req: r}
	return context.WithValue(ctx, handlingKey{}, h), func() context.Context { return h.continues }
}

// NoteContinues records, for a request observed under ctx, that it
// continues the exchange whose first round was handled with first.
func NoteContinues(ctx, first context.Context) {
	if h, ok := ctx.Value(handlingKey{}).(*handling); ok {
		h.continues = first
	}
}

// RequestOf is the request of Handling in ctx, without its ID and Params
// (they belong to the request, which ends before what keeps this); empty
// when no observer saw one.
func RequestOf(ctx context.Context) Request {
	var r Request
	if h, ok := ctx.Value(handlingKey{}).(*handling); ok {
		r = h.req
	}
	r.ID, r.Params = nil, nil
	return r
}
