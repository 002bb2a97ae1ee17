package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
	"github.com/mcptrunk/mcptrunk/proxy/tasks"
)

// progressTaskServer is a server at revision whose tool research runs only
// as a task: at 2025-11-25 the trunk drives it (tasks/result waits for its
// end), at 2026-07-28 it follows it (tasks/get). Once two tasks exist (two
// hosts' calls in flight at once), each task sends two notifications/progress
// with the progressToken of the call that created it, messages "<task> step
// k", on the request that waits for it, and then ends with its id as its
// result. tokens lists the progress tokens the calls came with.
func progressTaskServer(revision string) (srv *memserver.Server, tokens func() []string) {
	var (
		mu   sync.Mutex
		byID = map[string]json.RawMessage{}
		all  []string
	)
	both := make(chan struct{})
	v2 := revision == protocol.Stateless
	srv = &memserver.Server{Revision: revision,
		Capabilities: json.RawMessage(`{"tools":{},"tasks":{"cancel":{},"requests":{"tools":{"call":{}}}}}`),
		Tools:        []json.RawMessage{json.RawMessage(`{"name":"research","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}}`)},
	}
	if v2 {
		srv.Capabilities = json.RawMessage(`{"tools":{},"extensions":{"` + tasks.Extension + `":{}}}`)
	}
	// finish sends task id's progress once both tasks exist, and returns
	// its result.
	finish := func(ctx context.Context, id string) (json.RawMessage, error) {
		select {
		case <-both:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		mu.Lock()
		token := byID[id]
		mu.Unlock()
		for k := 1; k <= 2; k++ {
			note, _ := json.Marshal(map[string]any{"progressToken": token, "progress": k, "total": 2, "message": fmt.Sprintf("%s step %d", id, k)})
			if err := srv.Conn().Notify("notifications/progress", note); err != nil {
				return nil, err
			}
		}
		return memserver.Text(id), nil
	}
	srv.Handle = func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		id, _ := rawjson.StringField(params, "taskId")
		switch method {
		case "tools/call":
			mu.Lock()
			defer mu.Unlock()
			token := rawjson.MetaValue(params, "progressToken")
			id := fmt.Sprintf("up-%d", len(byID)+1)
			byID[id] = token
			all = append(all, string(token))
			if len(byID) == 2 {
				close(both)
			}
			if v2 {
				return json.RawMessage(`{"resultType":"task","taskId":"` + id + `","status":"working","pollIntervalMs":1}`), nil
			}
			return json.RawMessage(`{"task":{"taskId":"` + id + `","status":"working","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttl":null}}`), nil
		case "tasks/result":
			return finish(ctx, id)
		case "tasks/get":
			res, err := finish(ctx, id)
			if err != nil {
				return nil, err
			}
			return json.RawMessage(`{"resultType":"complete","taskId":"` + id + `","status":"completed","result":` + string(res) + `}`), nil
		}
		return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "no %s", method)
	}
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), all...)
	}
}

// progressOfCall reads h's lines until the answer to request id: the
// messages of the notifications/progress before it, each checked to carry
// token, and the answer's result.
func progressOfCall(t *testing.T, h *memHost, id, token string) (messages []string, result json.RawMessage) {
	t.Helper()
	for {
		var m struct {
			ID     json.RawMessage
			Method string
			Params struct {
				ProgressToken json.RawMessage
				Message       string
			}
			Result, Error json.RawMessage
		}
		line := h.next("the answer to " + id)
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("the trunk wrote %q: %v", line, err)
		}
		switch {
		case m.Method == "notifications/progress":
			if string(m.Params.ProgressToken) != token {
				t.Errorf("progress with token %s, want the host's %s: %s", m.Params.ProgressToken, token, line)
			}
			messages = append(messages, m.Params.Message)
		case m.Method == "" && string(m.ID) == id:
			if m.Result == nil {
				t.Fatalf("the answer to %s: %s", id, line)
			}
			return messages, m.Result
		}
	}
}

// testProgressDuringTask: two 2025-11-25 hosts sharing the trunk (serve
// --http) call a task-only tool of a server at revision at once, with the
// same progressToken; the trunk runs each task for its host, and each host
// gets the progress its own task sends, with its own token, before its
// result, and none of the other's. The server saw a token of the trunk's
// for each call, not the hosts' one.
func testProgressDuringTask(t *testing.T, revision string) {
	srv, tokens := progressTaskServer(revision)
	tr, a := memTrunk(t, memserver.Set{"up": srv}, map[string]map[string]any{"up": {"protocolVersion": revision}}, nil, nil)
	tr.Share()
	b := &memHost{pipeHost: attachPipes(t, tr, &SessionOptions{ID: "b"})}
	a.initialize(`{}`)
	b.initialize(`{}`)
	a.tools()
	const call = `{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"mcp__up__research","arguments":{},"_meta":{"progressToken":"tok"}}}`
	a.send(call)
	b.send(call)
	tasksOf := map[string]string{}
	for name, h := range map[string]*memHost{"a": a, "b": b} {
		messages, res := progressOfCall(t, h, `"c"`, `"tok"`)
		var r struct{ Content []struct{ Text string } }
		if err := json.Unmarshal(res, &r); err != nil || len(r.Content) != 1 {
			t.Fatalf("host %s's result: %s", name, res)
		}
		task := r.Content[0].Text
		tasksOf[name] = task
		if want := []string{task + " step 1", task + " step 2"}; strings.Join(messages, "|") != strings.Join(want, "|") {
			t.Errorf("host %s (task %s) got progress %q, want %q", name, task, messages, want)
		}
	}
	for name, h := range map[string]*memHost{"a": a, "b": b} {
		h.call("ping", `{}`) // answered after every notification queued for h before it
		for _, m := range h.seenMethods() {
			if m == "notifications/progress" {
				t.Errorf("host %s got progress after its result: the other's", name)
			}
		}
	}
	if tasksOf["a"] == tasksOf["b"] {
		t.Errorf("both hosts got task %s's result", tasksOf["a"])
	}
	if got := tokens(); len(got) != 2 || got[0] == got[1] || got[0] == `"tok"` || got[1] == `"tok"` {
		t.Errorf("the server's calls came with progress tokens %q, want two of the trunk's", got)
	}
}

// A 2025-11-25 server's task the trunk drives for the host (drive.go).
func TestTasksDrivenProgress(t *testing.T) { testProgressDuringTask(t, protocol.Revision2025) }

// A 2026-07-28 server's task the trunk follows for the host (follow.go).
func TestTasksFollowedProgress(t *testing.T) { testProgressDuringTask(t, protocol.Stateless) }

// A 2026-07-28 host (over stdio, without the tasks extension) calling a
// 2025-11-25 server's task-only tool: the trunk drives the task as a
// parked exchange, and the progress the task sends reaches the host with
// the token of the call it belongs to, before that call's answer. Two
// calls run at once, with their own tokens.
func TestTasksDrivenProgressStatelessHost(t *testing.T) {
	srv, tokens := progressTaskServer(protocol.Revision2025)
	_, h := memTrunk(t, memserver.Set{"up": srv}, map[string]map[string]any{"up": {"protocolVersion": protocol.Revision2025}}, nil, nil)
	meta := func(token string) string {
		return `"_meta":{"progressToken":"` + token + `","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	}
	for _, c := range []string{"1", "2"} {
		h.send(`{"jsonrpc":"2.0","id":"c` + c + `","method":"tools/call","params":{"name":"mcp__up__research","arguments":{},` + meta("tok"+c) + `}}`)
	}
	progress := map[string][]string{} // by token
	results := map[string]string{}    // the task each call's result names, by call id
	for len(results) < 2 {
		var m struct {
			ID     string
			Method string
			Params struct {
				ProgressToken string
				Message       string
			}
			Result struct{ Content []struct{ Text string } }
		}
		line := h.next("the answers to both calls")
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("the trunk wrote %q: %v", line, err)
		}
		switch {
		case m.Method == "notifications/progress":
			if _, answered := results["c"+strings.TrimPrefix(m.Params.ProgressToken, "tok")]; answered {
				t.Errorf("progress after its call's answer: %s", line)
			}
			progress[m.Params.ProgressToken] = append(progress[m.Params.ProgressToken], m.Params.Message)
		case m.ID != "" && m.Method == "":
			if len(m.Result.Content) != 1 {
				t.Fatalf("the answer to %s: %s", m.ID, line)
			}
			results[m.ID] = m.Result.Content[0].Text
		}
	}
	if results["c1"] == results["c2"] {
		t.Errorf("both calls got task %s's result", results["c1"])
	}
	for _, c := range []string{"1", "2"} {
		task := results["c"+c]
		if want := []string{task + " step 1", task + " step 2"}; strings.Join(progress["tok"+c], "|") != strings.Join(want, "|") {
			t.Errorf("call c%s (task %s) got progress %q, want %q", c, task, progress["tok"+c], want)
		}
	}
	if got := tokens(); len(got) != 2 || got[0] == got[1] {
		t.Errorf("the server's calls came with progress tokens %q, want one per call", got)
	}
}
