package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
)

const (
	askingTask = `{"taskId":"t1","status":"input_required","pollIntervalMs":1,"inputRequests":{"k1":{"method":"elicitation/create","params":{"message":"sure?"}},"k2":{"method":"sampling/createMessage","params":{"messages":[]}}}}`
	doneTask   = `{"taskId":"t1","status":"completed","result":{"content":[{"type":"text","text":"done"}]}}`
)

// A followed task that asks for input: each request goes to the host once
// (a poll that still shows them, before the server took the update, asks
// nothing again), the answers reach the server in one tasks/update keyed
// as it asked, and the task is followed to its result.
func TestFollowAnswersInput(t *testing.T) {
	s := &script{statuses: []string{askingTask, askingTask, doneTask}}
	var (
		mu    sync.Mutex
		asked []string
	)
	f := &Follower{Conn: s, Server: "srv", Tool: "t", Can: func(string) bool { return true },
		Ask: func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, method+" "+string(params))
			if method == "elicitation/create" {
				return json.RawMessage(`{"action":"accept"}`), nil
			}
			return json.RawMessage(`{"role":"assistant"}`), nil
		}}
	res, err := f.run(context.Background(), context.Background(), json.RawMessage(createdTask))
	if err != nil || !strings.Contains(string(res), "done") {
		t.Fatalf("Run = %s, %v; want the result once the input was given", res, err)
	}
	if len(asked) != 2 || !strings.Contains(strings.Join(asked, ","), `elicitation/create {"message":"sure?"}`) {
		t.Errorf("the host was asked %q, want each input request once, its params as sent", asked)
	}
	var updates []string
	for _, c := range s.methods() {
		if strings.HasPrefix(c, "tasks/update ") {
			updates = append(updates, strings.TrimPrefix(c, "tasks/update "))
		}
	}
	if len(updates) != 1 {
		t.Fatalf("tasks/update sent %q, want once", updates)
	}
	var u struct {
		TaskID         string                     `json:"taskId"`
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
	}
	if err := json.Unmarshal([]byte(updates[0]), &u); err != nil || u.TaskID != "t1" ||
		string(u.InputResponses["k1"]) != `{"action":"accept"}` || string(u.InputResponses["k2"]) != `{"role":"assistant"}` {
		t.Errorf("tasks/update %s, want the answers keyed k1 and k2 for t1", updates[0])
	}
}

// A followed task asking for what the host did not declare, or by a
// method no revision has, is cancelled with an error naming the server,
// the tool and what was missing; the host is asked nothing.
func TestFollowInputRefused(t *testing.T) {
	for name, c := range map[string]struct {
		task, says string
		code       int
	}{
		"no capability":  {askingTask, `tool "t" on server "srv": task t1 needs the host's elicitation capability (input request "k1")`, protocol.CodeMissingClientCapabilities},
		"unknown method": {`{"taskId":"t1","status":"input_required","inputRequests":{"x":{"method":"tea/make"}}}`, `unknown method "tea/make"`, jsonrpc.CodeInternalError},
	} {
		s := &script{statuses: []string{c.task}}
		f := &Follower{Conn: s, Server: "srv", Tool: "t", Can: func(string) bool { return false },
			Ask: func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
				t.Errorf("%s: the host was asked", name)
				return nil, errors.New("no")
			}}
		_, err := f.run(context.Background(), context.Background(), json.RawMessage(createdTask))
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != c.code || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v, want code %d saying %q", name, err, c.code, c.says)
		}
		if calls := s.methods(); !strings.HasPrefix(calls[len(calls)-1], "tasks/cancel") {
			t.Errorf("%s: calls %q, want the task cancelled", name, calls)
		}
	}
}
