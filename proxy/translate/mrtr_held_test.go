package translate

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
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
	p := NewParking(context.Background(), func(f func()) { wg.Add(1); go func() { defer wg.Done(); f() }() }, nil)
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
