package tasks

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/proxy/observe"
)

// The trunk sees a task begin (the tools/call answered with it) and, most
// of the time, end: a tasks/get, tasks/result or status notification it
// forwards says so, or a cancel it forwards succeeds, or it runs the task
// itself (drive, follow). Operators want the tasks running now per server
// and each task as one unit in their metrics, traces and audit log, so the
// Ledger keeps the tasks between the two and tells the observers of both.
//
// A task whose end the trunk never hears of (a host that polls another
// replica, or stops asking) must not stay forever: each record expires at
// the task's ttl, at most a day (maxTTL), and at most 10,000 are kept (a new
// one makes room by expiring the one nearest its ttl). The records are
// swept as the Ledger is used (each task begun or heard of, each status
// read), so no goroutine is needed; a metrics scrape or the status page,
// which read the status now and then, keep expiry timely.

// maxTracked bounds the tasks the Ledger keeps at once: about 200 bytes
// each, 2 MB at most.
const maxTracked = 10_000

// maxTTL bounds how long a task is kept without news of its end, and is
// the time kept for a task whose server gives no ttl (unlimited, by the
// protocol).
const maxTTL = 24 * time.Hour

// Ledger is the record of the tasks the trunk knows to be running. Its
// zero value is not usable: NewLedger.
type Ledger struct {
	observers observe.Observers
	now       func() time.Time

	mu        sync.Mutex
	running   map[string]*record // key(server, id)
	perServer map[string]int
	expected  map[string]int // server -> calls in flight that may create a task (Expect)
	next      time.Time      // the earliest deadline of running; zero when empty
}

type record struct {
	server          string
	start, deadline time.Time
	end             func(observe.TaskEnd)
}

// ending is a record to end, outside the lock, with a status.
type ending struct {
	rec    *record
	status string
}

// NewLedger returns an empty ledger telling obs (those of them that are
// observe.TaskObservers) of each task.
func NewLedger(obs observe.Observers) *Ledger {
	return &Ledger{observers: obs, now: time.Now, running: map[string]*record{}, perServer: map[string]int{}}
}

// Created records the task that res, server's answer to a tools/call,
// created (a 2025-11-25 result with a task member, or a 2026-07-28
// CreateTaskResult), and returns the server's id for it; "" when res is no
// task. ctx is the call's: its observed request names who created it.
// driven says the trunk runs the task itself.
func (l *Ledger) Created(ctx context.Context, server string, res json.RawMessage, driven bool) string {
	task := res
	if !IsCreated(res) {
		start, end, found, err := rawjson.FieldSpan(res, "task")
		if err != nil || !found {
			return ""
		}
		task = res[start:end]
	}
	id, _ := rawjson.StringField(task, "taskId")
	if id == "" {
		return ""
	}
	now := l.now()
	rec := &record{server: server, start: now, deadline: now.Add(ttlOf(task))}
	l.mu.Lock()
	// Told under the lock, with the record going in: an observer that hears
	// of the task finds it counted (observers do not call back in).
	rec.end = l.observers.BeginTask(ctx, observe.Task{Server: server, ID: id, Call: observe.RequestOf(ctx), Driven: driven})
	ends := l.sweep(now)
	if old, ok := l.running[key(server, id)]; ok {
		// The same id again (a server that reuses ids): the first task
		// is over as far as anyone can tell.
		l.remove(key(server, id), old)
		ends = append(ends, ending{old, observe.TaskExpired})
	}
	if len(l.running) >= maxTracked {
		ends = append(ends, l.evict())
	}
	l.running[key(server, id)] = rec
	l.perServer[server]++
	if l.next.IsZero() || rec.deadline.Before(l.next) {
		l.next = rec.deadline
	}
	l.mu.Unlock()
	l.finish(now, ends)
	if status, _ := rawjson.StringField(task, "status"); terminal(status) {
		l.ended(server, id, status) // it ran at once
	}
	return id
}

// Heard reads what server's answer res (or err) to method, sent for its
// task id, or its status notification (method StatusMethod, res its
// params), says of the task, and ends the task's record when it ended.
func (l *Ledger) Heard(server, id, method string, res json.RawMessage, err error) {
	if status := statusOf(method, res, err); status != "" {
		l.ended(server, id, status)
	}
}

// ended ends server's task id with status; a task not recorded (ended
// already, expired, or created before the trunk started) is ignored.
func (l *Ledger) ended(server, id, status string) {
	now := l.now()
	l.mu.Lock()
	ends := l.sweep(now)
	if rec, ok := l.running[key(server, id)]; ok {
		l.remove(key(server, id), rec)
		ends = append(ends, ending{rec, status})
	}
	l.mu.Unlock()
	l.finish(now, ends)
}

// Close ends every task still recorded, as expired (the trunk will hear
// no more of them), so that each one's span ends and is exported and its
// audit line written while the trunk shuts down.
func (l *Ledger) Close() {
	now := l.now()
	l.mu.Lock()
	var ends []ending
	for k, rec := range l.running {
		l.remove(k, rec)
		ends = append(ends, ending{rec, observe.TaskExpired})
	}
	l.mu.Unlock()
	l.finish(now, ends)
}

// Running counts the tasks recorded as running, per server with any.
func (l *Ledger) Running() map[string]int {
	now := l.now()
	l.mu.Lock()
	ends := l.sweep(now)
	out := make(map[string]int, len(l.perServer))
	for server, n := range l.perServer {
		out[server] = n
	}
	l.mu.Unlock()
	l.finish(now, ends)
	return out
}

// Runs reports whether a task of server's is recorded as running: a lazy
// server is not stopped for being idle then (upstream.Events.KeepAwake),
// or the task would be lost with its process.
func (l *Ledger) Runs(server string) bool {
	now := l.now()
	l.mu.Lock()
	ends := l.sweep(now)
	n := l.perServer[server] + l.expected[server]
	l.mu.Unlock()
	l.finish(now, ends)
	return n > 0
}

// Expect counts a call to server that may create a task as work at the
// server until done is called, which the caller does once the call's
// result has been recorded (Created): between the server's answer and its
// record, Runs still says the server is in use, so an idle timeout never
// stops a server whose task the trunk is about to learn of.
func (l *Ledger) Expect(server string) (done func()) {
	l.mu.Lock()
	if l.expected == nil {
		l.expected = map[string]int{}
	}
	l.expected[server]++
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		if l.expected[server]--; l.expected[server] == 0 {
			delete(l.expected, server)
		}
		l.mu.Unlock()
	}
}

// Watch returns c as the trunk's own follow-up of server's task sees it:
// every answer to a tasks method is heard as a forwarded one would be.
func (l *Ledger) Watch(server string, c Caller) Caller { return watched{l, server, c} }

type watched struct {
	l      *Ledger
	server string
	c      Caller
}

func (w watched) Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	res, err := w.c.Call(ctx, method, params)
	id, _ := rawjson.StringField(params, "taskId")
	w.l.Heard(w.server, id, method, res, err)
	return res, err
}

// sweep removes the records past their deadline, returning them to end.
// The caller holds mu.
func (l *Ledger) sweep(now time.Time) []ending {
	if l.next.IsZero() || now.Before(l.next) {
		return nil
	}
	var ends []ending
	l.next = time.Time{}
	for k, rec := range l.running {
		if !now.Before(rec.deadline) {
			l.remove(k, rec)
			ends = append(ends, ending{rec, observe.TaskExpired})
		} else if l.next.IsZero() || rec.deadline.Before(l.next) {
			l.next = rec.deadline
		}
	}
	return ends
}

// evict removes the record nearest its deadline, to make room. The caller
// holds mu; next stays a lower bound, which is all sweep needs.
func (l *Ledger) evict() ending {
	var (
		oldK   string
		oldest *record
	)
	for k, rec := range l.running {
		if oldest == nil || rec.deadline.Before(oldest.deadline) {
			oldK, oldest = k, rec
		}
	}
	l.remove(oldK, oldest)
	return ending{oldest, observe.TaskExpired}
}

func (l *Ledger) remove(k string, rec *record) {
	delete(l.running, k)
	if l.perServer[rec.server]--; l.perServer[rec.server] <= 0 {
		delete(l.perServer, rec.server)
	}
}

// finish tells the observers of the records ended.
func (l *Ledger) finish(now time.Time, ends []ending) {
	for _, e := range ends {
		e.rec.end(observe.TaskEnd{Status: e.status, Duration: now.Sub(e.rec.start)})
	}
}

// statusOf is the terminal status an answer or notification tells of a
// task, "" when it tells of none.
func statusOf(method string, res json.RawMessage, err error) string {
	switch method {
	case "tasks/result":
		// 2025-11-25: it answers once the task has ended, with the
		// result of the tool's call (isError when it failed) or its
		// error. An invalid-params error is the usual answer for an id
		// the server does not know, which tells nothing of the task.
		switch {
		case err == nil && isError(res):
			return observe.TaskFailed
		case err == nil:
			return observe.TaskCompleted
		case jsonrpc.FromPeer(err) && jsonrpc.AsError(err).Code != jsonrpc.CodeInvalidParams:
			return observe.TaskFailed
		}
		return ""
	case "tasks/get", StatusMethod, "tasks/cancel":
		if err != nil {
			return ""
		}
		status, _ := rawjson.StringField(res, "status")
		if status == "" && method == "tasks/cancel" {
			return observe.TaskCancelled // an answer without the task: cancelled
		}
		if terminal(status) {
			return status
		}
	}
	return ""
}

// terminal reports whether a task status is one a task never leaves.
func terminal(status string) bool {
	return status == observe.TaskCompleted || status == observe.TaskFailed || status == observe.TaskCancelled
}

// isError reports a tool result's isError true.
func isError(res json.RawMessage) bool {
	start, end, found, err := rawjson.FieldSpan(res, "isError")
	return err == nil && found && string(res[start:end]) == "true"
}

// ttlOf is how long to keep a task without news: its ttl (2025-11-25 ttl,
// 2026-07-28 ttlMs, in milliseconds) within maxTTL, maxTTL when it has
// none.
func ttlOf(task json.RawMessage) time.Duration {
	var t struct {
		TTL   *float64 `json:"ttl"`
		TTLMs *float64 `json:"ttlMs"`
	}
	_ = json.Unmarshal(task, &t)
	ms := t.TTL
	if ms == nil {
		ms = t.TTLMs
	}
	if ms == nil || *ms <= 0 || *ms >= float64(maxTTL/time.Millisecond) {
		return maxTTL
	}
	return time.Duration(*ms * float64(time.Millisecond))
}
