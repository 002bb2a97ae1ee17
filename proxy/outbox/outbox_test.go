package outbox

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
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

func (r *recorder) Notify(method string, _ json.RawMessage) error {
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
	stop := make(chan struct{})
	q := New(conn, stop, func(string, error) {})
	var wg sync.WaitGroup
	wg.Go(q.Run)
	defer func() { close(stop); wg.Wait() }()
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
