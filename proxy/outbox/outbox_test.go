package outbox

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
)

// recorder is a host connection that keeps what it is sent.
type recorder struct {
	mu      sync.Mutex
	methods []string
	limit   int
}

var errTooLarge = errors.New("too large")

func (r *recorder) CheckSize(size int) error {
	if r.limit > 0 && size > r.limit {
		return errTooLarge
	}
	return nil
}

func (r *recorder) NotifyFor(_, method string, _ json.RawMessage) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.methods = append(r.methods, method)
	return nil
}

// Notifications reach the host in the order posted, a flush returns only
// once those before it are written, and one larger than the host reads is
// refused at once.
func TestQueueOrderFlushAndSize(t *testing.T) {
	conn := &recorder{limit: 200}
	q := New(conn, func(string, error) {})
	defer closeWithin(t, q)
	for _, m := range []string{"a", "b", "notifications/tools/list_changed", "c"} {
		if err := q.Post(m, json.RawMessage(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	if err := q.Push("d", json.RawMessage(`{}`), 40); err != nil {
		t.Fatal(err)
	}
	q.Flush()
	conn.mu.Lock()
	got := append([]string(nil), conn.methods...)
	conn.mu.Unlock()
	want := []string{"a", "b", "notifications/tools/list_changed", "c", "d"}
	if len(got) != len(want) {
		t.Fatalf("sent %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("sent %v, want %v", got, want)
		}
	}
	big := json.RawMessage(`{"x":"` + strings.Repeat("x", 300) + `"}`)
	if err := q.Post("big", big); !errors.Is(err, errTooLarge) {
		t.Errorf("an oversized notification: %v", err)
	}
}

// closeWithin closes q, failing if Close does not return.
func closeWithin(t *testing.T, q *Queue) {
	t.Helper()
	closed := make(chan struct{})
	go func() {
		q.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return")
	}
}

// A queue that is never sent a notification (a stateless request's
// session, usually) makes neither its queue nor its writer.
func TestQueueIdleUntilFirstNotification(t *testing.T) {
	q := New(&recorder{}, func(string, error) {})
	if q.queue != nil {
		t.Fatal("the queue was made before any notification")
	}
	closeWithin(t, q)
	if q.queue != nil {
		t.Error("Close made the queue")
	}
}

// After Close nothing more is written, and nothing waits: a Push is
// queued or refused as closed, a Flush returns.
func TestQueueAfterClose(t *testing.T) {
	conn := &recorder{}
	q := New(conn, func(string, error) {})
	closeWithin(t, q)
	// Room in the queue and the closed stop are both ready to a Push, so it
	// may be queued (nil) or refused; either way it is never written.
	if err := q.Push("notifications/resources/updated", json.RawMessage(`{}`), 2); err != nil && !errors.Is(err, jsonrpc.ErrClosed) {
		t.Errorf("Push after Close: %v", err)
	}
	q.Flush()
	conn.mu.Lock()
	defer conn.mu.Unlock()
	if len(conn.methods) != 0 {
		t.Errorf("written after Close: %q", conn.methods)
	}
}
