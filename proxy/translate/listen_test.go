package translate

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
)

// listenSession acknowledges into a channel and keeps the shares taken.
type listenSession struct {
	mu          sync.Mutex
	shares      map[string]int
	pushed      chan string
	watching    map[string]bool       // the tasks whose status is watched
	ends        map[string]chan error // each watched task's ended, which the test may send to
	noExtension bool                  // WatchTask refuses with -32021
}

// WatchTask watches the tasks named "t…", and refuses any other id.
func (s *listenSession) WatchTask(_ context.Context, id string) (func(), <-chan error, error) {
	if s.noExtension {
		return nil, nil, jsonrpc.Errorf(protocol.CodeMissingClientCapabilities, "no extension")
	}
	if !strings.HasPrefix(id, "t") {
		return nil, nil, errors.New("not a task of this session")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watching[id] = true
	if s.ends == nil {
		s.ends = map[string]chan error{}
	}
	s.ends[id] = make(chan error, 1)
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.watching, id)
	}, s.ends[id], nil
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

// A listen that names tasks is acknowledged with those whose status the
// session watches, gets notifications/tasks of those (by the id the host
// knows, with its subscriptionId) and of no other task, and stops watching
// when it ends; a host that did not declare the extension is refused
// (-32021) with nothing acknowledged or left watched.
func TestListensTasks(t *testing.T) {
	ls := NewListens()
	sess := &listenSession{shares: map[string]int{}, pushed: make(chan string, 4), watching: map[string]bool{}}
	done := make(chan error, 1)
	go func() {
		_, err := ls.Listen(context.Background(), json.RawMessage(`7`), nil,
			json.RawMessage(`{"notifications":{"taskIds":["t1","other"]}}`), sess, slog.New(slog.DiscardHandler))
		done <- err
	}()
	if ack := <-sess.pushed; !strings.Contains(ack, `"taskIds":["t1"]`) {
		t.Fatalf("acknowledgement: %s, want only the task watched", ack)
	}
	out, routed := ls.Route(taskNotification, json.RawMessage(`{"taskId":"t1","status":"completed"}`))
	if !routed || len(out) != 1 || !strings.Contains(string(out[0]), `"io.modelcontextprotocol/subscriptionId":7`) || !strings.Contains(string(out[0]), `"taskId":"t1"`) {
		t.Errorf("notifications/tasks of t1: %s, %v", out, routed)
	}
	if out, routed := ls.Route(taskNotification, json.RawMessage(`{"taskId":"t2","status":"completed"}`)); !routed || len(out) != 0 {
		t.Errorf("notifications/tasks of a task not asked for: %s, %v", out, routed)
	}
	ls.Shutdown()
	if err := <-done; err != nil {
		t.Errorf("answer at shutdown: %v", err)
	}
	sess.mu.Lock()
	if len(sess.watching) != 0 {
		t.Errorf("still watching %v after the listen ended", sess.watching)
	}
	sess.mu.Unlock()

	refused := &listenSession{shares: map[string]int{}, pushed: make(chan string, 4), noExtension: true}
	_, err := NewListens().Listen(context.Background(), json.RawMessage(`8`), nil,
		json.RawMessage(`{"notifications":{"toolsListChanged":true,"taskIds":["t1"]}}`), refused, slog.New(slog.DiscardHandler))
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != protocol.CodeMissingClientCapabilities || len(refused.pushed) != 0 {
		t.Errorf("without the extension: %v, %d pushed; want -32021 and no acknowledgement", err, len(refused.pushed))
	}
}

// A listen whose task's server stops reporting on it (its listen there
// ended: a crash, a reload) ends with an error naming the task as the host
// knows it, instead of staying open hearing nothing of it; it stops
// watching its other tasks, and a later notification reaches it no more.
func TestListensTaskReportLost(t *testing.T) {
	ls := NewListens()
	sess := &listenSession{shares: map[string]int{}, pushed: make(chan string, 4), watching: map[string]bool{}}
	done := make(chan error, 1)
	go func() {
		_, err := ls.Listen(context.Background(), json.RawMessage(`9`), nil,
			json.RawMessage(`{"notifications":{"toolsListChanged":true,"taskIds":["t1","t2"]}}`), sess, slog.New(slog.DiscardHandler))
		done <- err
	}()
	if ack := <-sess.pushed; !strings.Contains(ack, `"taskIds":["t1","t2"]`) {
		t.Fatalf("acknowledgement: %s", ack)
	}
	sess.mu.Lock()
	sess.ends["t2"] <- errors.New(`server "s" stopped reporting on its tasks: the connection ended`)
	sess.mu.Unlock()
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the listen stayed open after its task's server stopped reporting on it")
	}
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeUnavailable || !strings.Contains(rpcErr.Message, `task "t2"`) || !strings.Contains(rpcErr.Message, "the connection ended") {
		t.Fatalf("the listen ended with %v, want -32000 naming task t2 and why", err)
	}
	sess.mu.Lock()
	if len(sess.watching) != 0 {
		t.Errorf("still watching %v after the listen ended", sess.watching)
	}
	sess.mu.Unlock()
	if out, _ := ls.Route(taskNotification, json.RawMessage(`{"taskId":"t1","status":"completed"}`)); len(out) != 0 {
		t.Errorf("a notification reached the ended listen: %s", out)
	}
}
