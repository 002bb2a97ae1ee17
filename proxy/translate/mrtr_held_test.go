package translate

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"
)

// blockingUpstream's calls wait until their context ends.
type blockingUpstream struct{ name string }

func (u blockingUpstream) Name() string { return u.name }
func (u blockingUpstream) Call(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// A held exchange is found by the server and the task its requests name
// in their related-task _meta, and takes no other request; Hold of the
// same task returns it rather than sending tasks/result again; ending it
// forgets it.
func TestHeldTakesItsTaskOnly(t *testing.T) {
	var wg sync.WaitGroup
	p := NewParking(context.Background(), func(f func()) bool { wg.Go(f); return true }, nil)
	defer wg.Wait()
	defer p.CloseAll()
	pc := Parked{Upstream: blockingUpstream{"srv"}, Method: "tasks/result", Params: json.RawMessage(`{"taskId":"t1"}`)}
	h := p.Hold(context.Background(), pc, "t1")
	if again := p.Hold(context.Background(), pc, "t1"); again.ex != h.ex || p.Count() != 1 {
		t.Fatalf("a second Hold of t1 opened another exchange (%d open)", p.Count())
	}
	naming := func(task string) json.RawMessage {
		return json.RawMessage(`{"_meta":{"` + RelatedTaskKey + `":{"taskId":"` + task + `"}}}`)
	}
	if ex := p.Current("srv", naming("t1")); ex != h.ex {
		t.Errorf("a request naming t1 went to %v, want the held exchange", ex)
	}
	for what, params := range map[string]json.RawMessage{"another task": naming("t2"), "no task": json.RawMessage(`{}`)} {
		if ex := p.Current("srv", params); ex != nil {
			t.Errorf("a request naming %s went to an exchange", what)
		}
	}
	if ex := p.Current("other", naming("t1")); ex != nil {
		t.Errorf("another server's request naming t1 went to an exchange")
	}
	h.End(nil)
	if p.Held("srv", "t1") != nil || p.Current("srv", naming("t1")) != nil {
		t.Errorf("the ended exchange is still held")
	}
}

// A call the trunk's goroutines refuse (it is closing) ends with the
// shutdown's reason, and leaves no exchange behind.
func TestParkedCallRefusedAtShutdown(t *testing.T) {
	p := NewParking(context.Background(), func(func()) bool { return false }, nil)
	pc := Parked{Upstream: blockingUpstream{"srv"}, Method: "tools/call", Timeout: time.Minute, Params: json.RawMessage(`{"name":"x"}`)}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := p.Call(ctx, pc); !errors.Is(err, errShuttingDown) {
		t.Fatalf("Call while the trunk closes: %v, want %v", err, errShuttingDown)
	}
	if n := p.Count(); n != 0 {
		t.Errorf("%d exchanges left open", n)
	}
}
