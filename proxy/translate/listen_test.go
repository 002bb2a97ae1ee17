package translate

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// listenSession acknowledges into a channel and keeps the shares taken.
type listenSession struct {
	mu     sync.Mutex
	shares map[string]int
	pushed chan string
}

func (s *listenSession) Acquire(_ context.Context, uri string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.shares[uri]++
	return nil
}

func (s *listenSession) Release(uri string, _ bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.shares[uri]--
}

func (s *listenSession) CheckSize(int) error { return nil }

func (s *listenSession) Push(method string, params json.RawMessage, _ int) error {
	s.pushed <- method + " " + string(params)
	return nil
}

// A listen is acknowledged, gets the notifications it asked for with its
// subscriptionId and no others, holds its subscription until it ends, and
// is answered at shutdown.
func TestListensWithoutATrunk(t *testing.T) {
	ls := NewListens()
	sess := &listenSession{shares: map[string]int{}, pushed: make(chan string, 4)}
	type answer struct {
		res json.RawMessage
		err error
	}
	done := make(chan answer, 1)
	go func() {
		res, err := ls.Listen(context.Background(), json.RawMessage(`"L"`), nil,
			json.RawMessage(`{"notifications":{"toolsListChanged":true,"resourceSubscriptions":["mcptrunk://s/r"]}}`), sess, slog.New(slog.DiscardHandler))
		done <- answer{res, err}
	}()
	if ack := <-sess.pushed; !strings.Contains(ack, `"io.modelcontextprotocol/subscriptionId":"L"`) || !strings.Contains(ack, `"resourceSubscriptions":["mcptrunk://s/r"]`) {
		t.Fatalf("acknowledgement: %s", ack)
	}
	if out, routed := ls.Route("notifications/tools/list_changed", nil); !routed || len(out) != 1 || !strings.Contains(string(out[0]), `"L"`) {
		t.Errorf("tools/list_changed: %s, %v", out, routed)
	}
	if out, routed := ls.Route("notifications/prompts/list_changed", nil); !routed || len(out) != 0 {
		t.Errorf("prompts/list_changed, not asked for: %s", out)
	}
	if out, routed := ls.Route("notifications/resources/updated", json.RawMessage(`{"uri":"mcptrunk://s/r"}`)); !routed || len(out) != 1 {
		t.Errorf("resources/updated: %s", out)
	}
	if _, routed := ls.Route("notifications/message", json.RawMessage(`{}`)); routed {
		t.Errorf("a log message is not the listens'")
	}
	ls.Shutdown()
	a := <-done
	if a.err != nil || !strings.Contains(string(a.res), `"resultType":"complete"`) {
		t.Errorf("answer at shutdown: %s, %v", a.res, a.err)
	}
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.shares["mcptrunk://s/r"] != 0 {
		t.Errorf("shares left: %v", sess.shares)
	}
}
