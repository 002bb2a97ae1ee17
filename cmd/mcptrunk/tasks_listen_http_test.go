package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/internal/testkit/taskserver"
)

// Task status at 2026-07-28 through serve --http, on real HTTP both ways:
// a host's subscriptions/listen naming the task its call created is
// acknowledged with that id, and hears the tasks server's notifications/tasks
// for it (through the trunk's own listen upstream) under the trunk's id and
// the listen's subscriptionId, up to completed with the result inlined.
func TestTasksStatusOnListenHTTP(t *testing.T) {
	t.Parallel()
	tasksURL := taskserver.Start(t)
	cfg := writeConfig(t, map[string]server{"tasks": pinStateless(server{"type": "http", "url": tasksURL, "namespace": false})}, nil)
	ctx := testCtx(t, 2*time.Minute)
	trunk := startHTTPTrunk(t, ctx, cfg)

	post := func(ctx context.Context, id int, method, name, params string) *http.Response {
		t.Helper()
		body := `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"` + method + `","params":{` + params + `,` + tasksExtensionMeta + `}}`
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, trunk.url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set(protocol.HeaderProtocolVersion, "2026-07-28")
		req.Header.Set(protocol.HeaderMethod, method)
		if name != "" {
			req.Header.Set(protocol.HeaderName, name)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	// call is a request's result, read from its JSON body or event stream.
	call := func(id int, method, name, params string) map[string]json.RawMessage {
		t.Helper()
		resp := post(ctx, id, method, name, params)
		defer resp.Body.Close()
		for msg := range sseMessages(resp) {
			var m struct {
				Result map[string]json.RawMessage
				Error  json.RawMessage
			}
			if json.Unmarshal(msg, &m) == nil && (m.Result != nil || m.Error != nil) {
				if m.Error != nil {
					t.Fatalf("%s: %s", method, m.Error)
				}
				return m.Result
			}
		}
		t.Fatalf("%s: no answer", method)
		return nil
	}

	created := call(1, "tools/call", "confirm_delete", `"name":"confirm_delete","arguments":{"filename":"notes.txt"}`)
	var taskID string
	if json.Unmarshal(created["taskId"], &taskID) != nil || taskID == "" {
		t.Fatalf("confirm_delete: %v, want a task", created)
	}

	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	listen := post(lctx, 7, protocol.MethodListen, "", `"notifications":{"taskIds":["`+taskID+`"]}`)
	defer listen.Body.Close()
	events := sseMessages(listen)
	next := func(what string) string {
		t.Helper()
		msg, ok := <-events
		if !ok {
			t.Fatalf("the listen ended before %s", what)
		}
		return string(msg)
	}
	if ack := next("its acknowledgement"); !strings.Contains(ack, protocol.NotificationAcknowledged) || !strings.Contains(ack, `"taskIds":["`+taskID+`"]`) {
		t.Fatalf("acknowledgement %s, want the task's id", ack)
	}

	// The task asks to confirm: read it, or wait on the listen until it has.
	var keys []string
	for len(keys) == 0 {
		got := call(2, "tasks/get", taskID, `"taskId":"`+taskID+`"`)
		var inputs map[string]json.RawMessage
		_ = json.Unmarshal(got["inputRequests"], &inputs)
		for k := range inputs {
			keys = append(keys, k)
		}
		if len(keys) == 0 {
			next("the task's question")
		}
	}
	call(3, "tasks/update", taskID, `"taskId":"`+taskID+`","inputResponses":{"`+keys[0]+`":{"action":"accept","content":{"confirm":true}}}`)
	for {
		n := next("the task's completion")
		if !strings.Contains(n, `"method":"notifications/tasks"`) || !strings.Contains(n, `"taskId":"`+taskID+`"`) || !strings.Contains(n, `"`+protocol.MetaSubscriptionID+`":7`) {
			t.Fatalf("listen got %s, want notifications/tasks of %s for subscription 7", n, taskID)
		}
		if strings.Contains(n, `"status":"completed"`) {
			if !strings.Contains(n, "deleted notes.txt") {
				t.Errorf("completed without the result inlined: %s", n)
			}
			break
		}
	}
}

// sseMessages yields each JSON-RPC message of a response: its JSON body,
// or each event's data as the stream delivers it.
func sseMessages(resp *http.Response) <-chan json.RawMessage {
	out := make(chan json.RawMessage, 16)
	go func() {
		defer close(out)
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			var m json.RawMessage
			if json.NewDecoder(resp.Body).Decode(&m) == nil {
				out <- m
			}
			return
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
				out <- json.RawMessage(strings.TrimSpace(data))
			}
		}
	}()
	return out
}
