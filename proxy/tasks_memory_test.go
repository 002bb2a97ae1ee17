package proxy

import (
	"context"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
	"github.com/mcptrunk/mcptrunk/proxy/observe"
)

// taskServer is a 2025-11-25 server with tasks: a tools/call with a task
// member creates task "up-1", which tasks/get, tasks/result, tasks/list and
// tasks/cancel know. It records the task ids it was asked about.
func taskServer() (*memserver.Server, func() []string) {
	var (
		mu    sync.Mutex
		asked []string
	)
	s := &memserver.Server{
		Capabilities: json.RawMessage(`{"tools":{},"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}}`),
		Tools:        []json.RawMessage{memserver.Tool("research", "long")},
	}
	const task = `{"taskId":"up-1","status":"working","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttl":60000,"pollInterval":10}`
	s.Handle = func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		if id, err := rawjson.StringField(params, "taskId"); err == nil && id != "" {
			mu.Lock()
			asked = append(asked, method+" "+id)
			mu.Unlock()
		}
		switch method {
		case "tools/call":
			if !rawjson.HasField(params, "task") {
				return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "this tool needs a task")
			}
			return json.RawMessage(`{"task":` + task + `}`), nil
		case "tasks/get":
			// The status changes as the host polls: the server says so too.
			if err := s.Conn().Notify("notifications/tasks/status", json.RawMessage(task)); err != nil {
				return nil, err
			}
			return json.RawMessage(task), nil
		case "tasks/cancel":
			return json.RawMessage(task), nil
		case "tasks/list":
			return json.RawMessage(`{"tasks":[` + task + `]}`), nil
		case "tasks/result":
			return json.RawMessage(`{"content":[{"type":"text","text":"done"}],"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"up-1"}}}`), nil
		}
		return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "no %s", method)
	}
	return s, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), asked...)
	}
}

// A task a server creates reaches the host under the trunk's id, and every
// tasks method with that id reaches the server with its own; an id the
// trunk did not issue, or issued to another session, is refused without
// reaching any server.
func TestTasksPassthrough(t *testing.T) {
	s, asked := taskServer()
	tr, h := memTrunk(t, memserver.Set{"slow": s, "plain": &memserver.Server{}}, nil, nil, nil)
	h.initialize(`{}`)
	h.tools() // the servers are up

	res, errObj := h.call("tools/call", `{"name":"mcp__slow__research","arguments":{},"task":{"ttl":60000}}`)
	var created struct {
		Task struct{ TaskID, Status string }
	}
	if err := json.Unmarshal(res, &created); err != nil || created.Task.Status != "working" {
		t.Fatalf("tools/call with a task: %s %s", res, errObj)
	}
	id := created.Task.TaskID
	if !strings.HasPrefix(id, "mcptrunk-task1.") {
		t.Fatalf("the host got task id %q, not the trunk's", id)
	}
	quoted, _ := json.Marshal(id)
	for _, m := range []string{"tasks/get", "tasks/cancel"} {
		res, errObj := h.call(m, `{"taskId":`+string(quoted)+`}`)
		if got, _ := rawjson.StringField(res, "taskId"); got != id {
			t.Errorf("%s: %s %s, want the task under id %s", m, res, errObj, id)
		}
	}
	status := h.waitFor("notifications/tasks/status")
	if got, _ := rawjson.StringField(status, "taskId"); got != id {
		t.Errorf("the status notification: %s, want it under id %s", status, id)
	}
	res, errObj = h.call("tasks/result", `{"taskId":`+string(quoted)+`}`)
	if !strings.Contains(string(res), `"done"`) || !strings.Contains(string(res), string(quoted)) || strings.Contains(string(res), "up-1") {
		t.Errorf("tasks/result: %s %s, want the result related to %s", res, errObj, id)
	}
	res, errObj = h.call("tasks/list", `{}`)
	var list struct{ Tasks []struct{ TaskID string } }
	if err := json.Unmarshal(res, &list); err != nil || len(list.Tasks) != 1 || list.Tasks[0].TaskID != id {
		t.Errorf("tasks/list: %s %s, want the one task under %s", res, errObj, id)
	}
	want := []string{"tasks/get up-1", "tasks/cancel up-1", "tasks/result up-1"}
	if got := asked(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("the server was asked %q, want %q", got, want)
	}

	other, _ := json.Marshal(tr.taskIDs.Issue("another-session", "slow", "up-1"))
	for name, bad := range map[string]string{
		"another session's": string(other),
		"the server's own":  `"up-1"`,
		"forged":            `"mcptrunk-task1.c2xvdwB1cC0x.AAAA"`,
	} {
		if res, errObj := h.call("tasks/get", `{"taskId":`+bad+`}`); res != nil || !strings.Contains(string(errObj), "-32602") {
			t.Errorf("%s id: %s %s, want -32602", name, res, errObj)
		}
	}
	if got := asked(); len(got) != len(want) {
		t.Errorf("a refused id reached the server: %q", got)
	}
}

// With no server offering tasks, the tasks methods do not exist.
func TestTasksNoneOffered(t *testing.T) {
	_, h := memTrunk(t, memserver.Set{"plain": &memserver.Server{}}, nil, nil, nil)
	h.initialize(`{}`)
	for _, m := range []string{"tasks/list", "tasks/get"} {
		if res, errObj := h.call(m, `{"taskId":"x"}`); res != nil || !strings.Contains(string(errObj), "-32601") {
			t.Errorf("%s: %s %s, want -32601", m, res, errObj)
		}
	}
}

// waitFor returns the params of the first notification of method the trunk
// sent, reading the host's lines until it comes.
func (h *memHost) waitFor(method string) json.RawMessage {
	h.t.Helper()
	for {
		for _, m := range h.seen {
			var got string
			if json.Unmarshal(m["method"], &got) == nil && got == method {
				return m["params"]
			}
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(h.next(method)), &m); err != nil {
			h.t.Fatalf("%s: %v", method, err)
		}
		h.seen = append(h.seen, m)
	}
}

// Two sessions share the server: a task id of one is refused in the other,
// and the task's status reaches only the session that created it.
func TestTasksSessionBound(t *testing.T) {
	s, asked := taskServer()
	tr, a := memTrunk(t, memserver.Set{"slow": s}, nil, nil, nil)
	tr.Share()
	b := &memHost{pipeHost: runPipes(t, func(ctx context.Context, in io.Reader, out io.Writer) error {
		return tr.Attach(jsonrpc.NewLineReader(in), jsonrpc.NewLineWriter(out), &SessionOptions{ID: "b"}).Run(ctx)
	})}
	a.initialize(`{}`)
	b.initialize(`{}`)
	a.tools()
	res, errObj := a.call("tools/call", `{"name":"mcp__slow__research","arguments":{},"task":{}}`)
	var created struct{ Task struct{ TaskID string } }
	if err := json.Unmarshal(res, &created); err != nil || created.Task.TaskID == "" {
		t.Fatalf("tools/call with a task: %s %s", res, errObj)
	}
	byID := `{"taskId":` + strconv.Quote(created.Task.TaskID) + `}`
	if res, errObj := b.call("tasks/get", byID); res != nil || !strings.Contains(string(errObj), "-32602") {
		t.Errorf("another session's task id: %s %s, want -32602", res, errObj)
	}
	if got := asked(); len(got) != 0 {
		t.Errorf("the refused id reached the server: %q", got)
	}
	if res, errObj := a.call("tasks/get", byID); res == nil {
		t.Fatalf("tasks/get in the creating session: %s", errObj)
	}
	a.waitFor("notifications/tasks/status")
	b.call("ping", `{}`) // b has read everything the trunk wrote it before
	for _, m := range b.seenMethods() {
		if m == "notifications/tasks/status" {
			t.Errorf("the other session got the task's status")
		}
	}
}

// When sessions share the server, tasks/list shows a session only the
// tasks it created, though the server lists every session's: here the
// server's one task is a's, so b's list is empty.
func TestTasksListSessionBound(t *testing.T) {
	s, _ := taskServer()
	tr, a := memTrunk(t, memserver.Set{"slow": s}, nil, nil, nil)
	tr.Share()
	b := &memHost{pipeHost: runPipes(t, func(ctx context.Context, in io.Reader, out io.Writer) error {
		return tr.Attach(jsonrpc.NewLineReader(in), jsonrpc.NewLineWriter(out), &SessionOptions{ID: "b"}).Run(ctx)
	})}
	a.initialize(`{}`)
	b.initialize(`{}`)
	a.tools()
	if res, errObj := a.call("tools/call", `{"name":"mcp__slow__research","arguments":{},"task":{}}`); res == nil {
		t.Fatalf("tools/call with a task: %s", errObj)
	}
	count := func(h *memHost) int {
		res, errObj := h.call("tasks/list", `{}`)
		var list struct{ Tasks []json.RawMessage }
		if err := json.Unmarshal(res, &list); err != nil {
			t.Fatalf("tasks/list: %s %s", res, errObj)
		}
		return len(list.Tasks)
	}
	if n := count(a); n != 1 {
		t.Errorf("the creating session lists %d tasks, want its one", n)
	}
	if n := count(b); n != 0 {
		t.Errorf("the other session lists %d tasks, want none", n)
	}
}

// Observers (the audit log among them) learn which server a tasks request
// concerns from the task id, as for a named item; an id the trunk did not
// issue names none.
func TestTasksObserved(t *testing.T) {
	s, _ := taskServer()
	o := &recordingObserver{}
	_, h := memTrunk(t, memserver.Set{"slow": s}, nil, nil, &Options{Observers: []observe.Observer{o}})
	h.initialize(`{}`)
	h.tools()
	res, errObj := h.call("tools/call", `{"name":"mcp__slow__research","arguments":{},"task":{}}`)
	var created struct{ Task struct{ TaskID string } }
	if err := json.Unmarshal(res, &created); err != nil || created.Task.TaskID == "" {
		t.Fatalf("tools/call with a task: %s %s", res, errObj)
	}
	h.call("tasks/cancel", `{"taskId":`+strconv.Quote(created.Task.TaskID)+`}`)
	h.call("tasks/cancel", `{"taskId":"forged"}`)
	o.mu.Lock()
	defer o.mu.Unlock()
	var cancels []string
	for _, line := range o.seen {
		if f := strings.Split(line, "|"); f[3] == "tasks/cancel" {
			cancels = append(cancels, f[4]+" "+f[5][:min(len(f[5]), 15)])
		}
	}
	if want := []string{"slow mcptrunk-task1.", " forged"}; strings.Join(cancels, ",") != strings.Join(want, ",") {
		t.Errorf("observed tasks/cancel as %q, want %q (server, then the id's start)", cancels, want)
	}
}
