package taskserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/protocol"
)

// The statuses of a task (SEP-2663).
const (
	statusWorking       = "working"
	statusInputRequired = "input_required"
	statusCompleted     = "completed"
	statusFailed        = "failed"
	statusCancelled     = "cancelled"
)

func terminal(status string) bool {
	return status == statusCompleted || status == statusFailed || status == statusCancelled
}

// task is one task: its state, guarded by mu, and the goroutine running it
// (cancel ends it).
type task struct {
	s       *Server
	id      string
	created time.Time
	cancel  context.CancelFunc
	expiry  *time.Timer // removes the task once its TTL has passed

	mu        sync.Mutex
	status    string
	message   string // statusMessage
	updated   time.Time
	result    json.RawMessage
	err       *rpcError
	pending   map[string]json.RawMessage // key -> the input request not yet answered
	answers   map[string]json.RawMessage // key -> the response tasks/update brought
	answered  chan struct{}              // closed when pending empties
	keySerial int                        // makes input request keys unique over the task's life
}

// start makes a task for run, records it (so tasks/get finds it before the
// CreateTaskResult is sent) and runs it on its own goroutine.
func (s *Server) start(run func(ctx context.Context, in asker) (json.RawMessage, error)) (*task, *rpcError) {
	id := make([]byte, 16)
	if _, err := rand.Read(id); err != nil {
		return nil, &rpcError{Code: -32603, Message: "making a task id: " + err.Error()}
	}
	ctx, cancel := context.WithCancel(context.Background())
	now := time.Now()
	t := &task{s: s, id: hex.EncodeToString(id), created: now, cancel: cancel, status: statusWorking, updated: now}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		cancel()
		return nil, &rpcError{Code: -32603, Message: "the server is closing"}
	}
	s.tasks[t.id] = t
	t.expiry = time.AfterFunc(s.opts.TTL, func() { s.expire(t) })
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		result, err := runGuarded(ctx, run, t)
		t.finish(ctx, result, err)
	}()
	return t, nil
}

// runGuarded runs a task's work, turning a panic into the protocol error a
// crashed handler is (protocol_error_job panics on purpose).
func runGuarded(ctx context.Context, run func(context.Context, asker) (json.RawMessage, error), in asker) (result json.RawMessage, err error) {
	defer func() {
		if p := recover(); p != nil {
			result, err = nil, &rpcError{Code: -32603, Message: fmt.Sprintf("Internal error: %v", p)}
		}
	}()
	return run(ctx, in)
}

// expire removes a task whose TTL has passed, cancelling it if it still
// runs.
func (s *Server) expire(t *task) {
	s.mu.Lock()
	delete(s.tasks, t.id)
	s.mu.Unlock()
	t.cancel()
}

// finish records how the task's work ended, unless the task already ended
// (a cancelled task stays cancelled whatever its work returns).
func (t *task) finish(ctx context.Context, result json.RawMessage, err error) {
	t.mu.Lock()
	if terminal(t.status) {
		t.mu.Unlock()
		return
	}
	var rerr *rpcError
	switch {
	case err == nil:
		t.status, t.result, t.message = statusCompleted, result, ""
	case ctx.Err() != nil:
		t.status, t.message = statusCancelled, "the task was stopped"
	case errors.As(err, &rerr):
		t.status, t.err, t.message = statusFailed, rerr, "the tool failed: "+rerr.Message
	default:
		t.status, t.err, t.message = statusFailed, &rpcError{Code: -32603, Message: err.Error()}, err.Error()
	}
	t.pending = nil
	t.updated = time.Now()
	t.mu.Unlock()
	t.s.notify(t)
}

// ask parks the task on input: its status is input_required with reqs
// until tasks/update has answered every one. Keys get a serial so that no
// key is reused in the task's life; the answers come back under the keys
// of reqs.
func (t *task) ask(ctx context.Context, reqs map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	t.mu.Lock()
	if terminal(t.status) {
		t.mu.Unlock()
		return nil, context.Canceled
	}
	t.keySerial++
	keyOf := map[string]string{}
	t.pending, t.answers = map[string]json.RawMessage{}, map[string]json.RawMessage{}
	for k, r := range reqs {
		keyOf[k] = fmt.Sprintf("%s-%d", k, t.keySerial)
		t.pending[keyOf[k]] = r
	}
	answered := make(chan struct{})
	t.answered = answered
	t.status, t.message, t.updated = statusInputRequired, "waiting for the client's input", time.Now()
	t.mu.Unlock()
	t.s.notify(t)

	select {
	case <-answered:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	out := map[string]json.RawMessage{}
	for k, key := range keyOf {
		out[k] = t.answers[key]
	}
	return out, nil
}

// update delivers tasks/update's responses: those to outstanding keys are
// taken, any other ignored (SEP-2663); once none is outstanding the task
// works again.
func (t *task) update(responses map[string]json.RawMessage) {
	t.mu.Lock()
	took := false
	for key, r := range responses {
		if _, ok := t.pending[key]; ok {
			delete(t.pending, key)
			t.answers[key] = r
			took = true
		}
	}
	resumed := took && len(t.pending) == 0 && t.status == statusInputRequired
	if resumed {
		close(t.answered)
		t.status, t.message = statusWorking, ""
	}
	if took {
		t.updated = time.Now()
	}
	t.mu.Unlock()
	if took {
		t.s.notify(t)
	}
}

// cancelTask settles a task that has not ended as cancelled at once (so no
// later result can replace the status the client asked for) and stops its
// work; a task that has ended is left as it is.
func (t *task) cancelTask() {
	t.mu.Lock()
	if terminal(t.status) {
		t.mu.Unlock()
		return
	}
	t.status, t.message, t.pending, t.updated = statusCancelled, "cancelled by the client", nil, time.Now()
	t.mu.Unlock()
	t.cancel()
	t.s.notify(t)
}

// detailed is the task as tasks/get and notifications/tasks show it
// (DetailedTask): the status' own field inlined, no requestState.
func (t *task) detailed() map[string]any {
	t.mu.Lock()
	defer t.mu.Unlock()
	d := t.base()
	switch t.status {
	case statusInputRequired:
		d[protocol.FieldInputRequests] = maps.Clone(t.pending)
	case statusCompleted:
		d["result"] = t.result
	case statusFailed:
		d["error"] = t.err
	}
	return d
}

// base is the Task every shape shares; t.mu is held.
func (t *task) base() map[string]any {
	d := map[string]any{
		"taskId":         t.id,
		"status":         t.status,
		"createdAt":      stamp(t.created),
		"lastUpdatedAt":  stamp(t.updated),
		"ttlMs":          t.s.opts.TTL.Milliseconds(),
		"pollIntervalMs": t.s.opts.PollInterval.Milliseconds(),
	}
	if t.message != "" {
		d["statusMessage"] = t.message
	}
	return d
}

// created is the CreateTaskResult: the flat Task, resultType "task".
func (t *task) createResult() map[string]any {
	t.mu.Lock()
	defer t.mu.Unlock()
	d := t.base()
	d[protocol.FieldResultType] = "task"
	return d
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }

// taskRequest answers tasks/get, tasks/update and tasks/cancel: -32021 for
// a request that does not declare the extension, -32602 for a task the
// server does not know (or no longer: expired).
func (s *Server) taskRequest(req *request) (any, *rpcError) {
	if !req.extension {
		return nil, missingExtension(req.Method)
	}
	var p struct {
		TaskID         *string         `json:"taskId"`
		InputResponses json.RawMessage `json:"inputResponses"`
	}
	if err := json.Unmarshal(req.Params, &p); err != nil || p.TaskID == nil {
		return nil, invalidParams("%s needs a taskId", req.Method)
	}
	s.mu.Lock()
	t := s.tasks[*p.TaskID]
	s.mu.Unlock()
	if t == nil {
		return nil, invalidParams("Failed to retrieve task: Task not found: %q", *p.TaskID)
	}
	ack := map[string]any{protocol.FieldResultType: protocol.ResultTypeComplete}
	switch req.Method {
	case "tasks/get":
		d := t.detailed()
		d[protocol.FieldResultType] = protocol.ResultTypeComplete
		return d, nil
	case "tasks/update":
		var responses map[string]json.RawMessage
		if err := json.Unmarshal(p.InputResponses, &responses); err != nil || responses == nil {
			return nil, invalidParams("tasks/update needs inputResponses, an object")
		}
		t.update(responses)
		return ack, nil
	default:
		t.cancelTask()
		return ack, nil
	}
}

// ids lists a set's members sorted, for an acknowledgement.
func ids(set map[string]bool) []string {
	return slices.Sorted(maps.Keys(set))
}
