package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
	"github.com/mcptrunk/mcptrunk/proxy/tasks"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// logTap is a slog.Handler keeping each record as "message k=v ...", for a
// test to wait for what the trunk logs as it happens (no polling).
type logTap struct {
	mu      sync.Mutex
	lines   []string
	changed chan struct{} // closed and replaced at each record
}

func newLogTap() *logTap { return &logTap{changed: make(chan struct{})} }

func (l *logTap) Enabled(context.Context, slog.Level) bool { return true }
func (l *logTap) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logTap) WithGroup(string) slog.Handler            { return l }

func (l *logTap) Handle(_ context.Context, r slog.Record) error {
	line := r.Message
	r.Attrs(func(a slog.Attr) bool {
		line += " " + a.Key + "=" + a.Value.String()
		return true
	})
	l.mu.Lock()
	l.lines = append(l.lines, line)
	close(l.changed)
	l.changed = make(chan struct{})
	l.mu.Unlock()
	return nil
}

// mark is where the records logged from now on begin.
func (l *logTap) mark() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.lines)
}

// await returns the first record from mark on that holds every one of
// parts, waiting for it.
func (l *logTap) await(t *testing.T, from int, parts ...string) string {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		l.mu.Lock()
		lines, changed := l.lines[from:], l.changed
		l.mu.Unlock()
		for _, line := range lines {
			if containsAll(line, parts) {
				return line
			}
		}
		select {
		case <-changed:
		case <-deadline:
			l.mu.Lock()
			tail := l.lines[from:]
			if len(tail) > 40 {
				tail = tail[len(tail)-40:]
			}
			l.mu.Unlock()
			t.Fatalf("no log record with %q; the records since:\n%s", parts, strings.Join(tail, "\n"))
		}
	}
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// Log records of a lazy server's life (upstream/lazy.go).
const (
	logInUse   = "idle timeout passed, but the server is in use"
	logStopped = "server stopped: sleeping until a request needs it"
)

// listeningTaskServer is a 2026-07-28 server of the tasks extension whose
// tool slow makes task srv-1; tasks/get reports it with the status in
// *status; each subscriptions/listen is acknowledged as asked, announced
// on listening, and held until the trunk ends it.
func listeningTaskServer(status *string, mu *sync.Mutex, listening chan<- string) *memserver.Server {
	srv := &memserver.Server{
		Revision:     protocol.Stateless,
		Capabilities: json.RawMessage(`{"tools":{},"extensions":{"` + tasks.Extension + `":{}}}`),
		Tools:        []json.RawMessage{json.RawMessage(`{"name":"slow","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}}`)},
	}
	task := func(status string) json.RawMessage {
		return json.RawMessage(`{"resultType":"task","taskId":"srv-1","status":"` + status + `","createdAt":"2026-12-04T00:00:00Z","lastUpdatedAt":"2026-12-04T00:00:00Z","ttlMs":600000}`)
	}
	srv.Handle = func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		switch method {
		case "tools/call":
			return task("working"), nil
		case "tasks/get":
			mu.Lock()
			defer mu.Unlock()
			return task(*status), nil
		case protocol.MethodListen:
			var p struct {
				Notifications struct {
					TaskIDs []string `json:"taskIds"`
				} `json:"notifications"`
			}
			_ = json.Unmarshal(params, &p)
			ack, _ := json.Marshal(map[string]any{"notifications": map[string]any{"taskIds": p.Notifications.TaskIDs}})
			if err := srv.Conn().Notify(protocol.NotificationAcknowledged, ack); err != nil {
				return nil, err
			}
			listening <- strings.Join(p.Notifications.TaskIDs, ",")
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "no %s", method)
	}
	return srv
}

// lazyTaskTrunk is a trunk with server v2 (listeningTaskServer) behind it,
// with spec's extra fields, and a 2026-07-28 host on its stdio; the
// trunk's log goes to the returned tap. The host has read the tools, so
// the servers have settled.
func lazyTaskTrunk(t *testing.T, srv *memserver.Server, spec map[string]any) (*Trunk, *memHost, *logTap) {
	t.Helper()
	tap := newLogTap()
	spec["protocolVersion"] = "2026-07-28"
	tr, h := memTrunk(t, memserver.Set{"v2": srv}, map[string]map[string]any{"v2": spec}, nil, &Options{Logger: slog.New(tap)})
	if res, errObj := h.call("tools/list", `{`+statelessMeta(`{}`)+`}`); !strings.Contains(string(res), "mcp__v2__slow") {
		t.Fatalf("tools/list: %s %s", res, errObj)
	}
	return tr, h, tap
}

// v2Client is server v2's Client.
func v2Client(t *testing.T, tr *Trunk) *upstream.Client {
	t.Helper()
	c, ok := tr.Fleet().Client("v2")
	if !ok {
		t.Fatal("no server v2")
	}
	return c
}

// A lazy server is not stopped for being idle while the trunk knows a task
// of it to be running, nor while a host's listen has it report on a task
// (its listen is a request in flight): past its idleTimeout it stays up on
// the same connection, each time for that reason; once the task has ended
// and the listen is cancelled, the idle timeout stops it.
func TestTasksLazyServerKeptAwake(t *testing.T) {
	var mu sync.Mutex
	status := "working"
	listening := make(chan string, 1)
	srv := listeningTaskServer(&status, &mu, listening)
	tr, h, tap := lazyTaskTrunk(t, srv, map[string]any{"lazy": true, "idleTimeout": "20ms"})
	tap.await(t, 0, logStopped, "its catalog is cached") // started to fill the cache, and stopped
	withTasks := statelessMeta(`{"extensions":{"` + tasks.Extension + `":{}}}`)

	from := tap.mark()
	res, errObj := h.call("tools/call", `{"name":"mcp__v2__slow","arguments":{},`+withTasks+`}`)
	id, _ := rawjson.StringField(res, "taskId")
	if !tasks.IsCreated(res) || id == "" {
		t.Fatalf("tools/call: %s %s", res, errObj)
	}
	dials := srv.Dials()
	// The call has ended: only the running task keeps the server up.
	tap.await(t, from, logInUse, "inflight=0", "tasks=true")

	h.send(`{"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{"notifications":{"taskIds":["` + id + `"]},` + withTasks + `}}`)
	if ack := h.waitFor(protocol.NotificationAcknowledged); !strings.Contains(string(ack), `"taskIds":["`+id+`"]`) {
		t.Fatalf("acknowledgement: %s", ack)
	}
	if got := <-listening; got != "srv-1" {
		t.Fatalf("the server was asked to report on %q, want srv-1", got)
	}
	mu.Lock()
	status = "completed"
	mu.Unlock()
	if res, errObj := h.call("tasks/get", `{"taskId":"`+id+`",`+withTasks+`}`); !strings.Contains(string(res), `"status":"completed"`) {
		t.Fatalf("tasks/get: %s %s", res, errObj)
	}
	// The task has ended: only the listen keeps the server up.
	from = tap.mark()
	tap.await(t, from, logInUse, "inflight=1", "tasks=false")
	c := v2Client(t, tr)
	if st := c.Status(); st.State != upstream.StateReady || st.IdleStops != 0 || srv.Dials() != dials {
		t.Fatalf("state %s after %d idle stops and %d dials, want ready on the task's connection (%d dials)", st.State, st.IdleStops, srv.Dials(), dials)
	}

	from = tap.mark()
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"L"}}`)
	tap.await(t, from, logStopped, "why=idle for 20ms")
	if st := c.Status(); st.State != upstream.StateSleeping || st.IdleStops != 1 {
		t.Errorf("state %s after %d idle stops, want sleeping after 1", st.State, st.IdleStops)
	}
}

// A listen whose task's server goes away (it crashed: its connection
// ended) is answered with an error naming the task as the host knows it,
// rather than staying open hearing nothing more of it.
func TestTasksListenEndsWithServer(t *testing.T) {
	var mu sync.Mutex
	status := "working"
	listening := make(chan string, 1)
	srv := listeningTaskServer(&status, &mu, listening)
	_, h, _ := lazyTaskTrunk(t, srv, map[string]any{})
	withTasks := statelessMeta(`{"extensions":{"` + tasks.Extension + `":{}}}`)
	res, errObj := h.call("tools/call", `{"name":"mcp__v2__slow","arguments":{},`+withTasks+`}`)
	id, _ := rawjson.StringField(res, "taskId")
	if id == "" {
		t.Fatalf("tools/call: %s %s", res, errObj)
	}
	h.send(`{"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{"notifications":{"taskIds":["` + id + `"]},` + withTasks + `}}`)
	h.waitFor(protocol.NotificationAcknowledged)
	<-listening
	if err := srv.Conn().Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	answer := h.pipeHost.answer(`"L"`)
	var e jsonrpc.Error
	if err := json.Unmarshal(answer["error"], &e); err != nil || e.Code != jsonrpc.CodeUnavailable ||
		!containsAll(e.Message, []string{fmt.Sprintf("task %q", id), `server "v2" stopped reporting on its tasks`}) {
		t.Errorf("the listen's answer: %s, want -32000 naming the task and its server", answer["error"])
	}
}
