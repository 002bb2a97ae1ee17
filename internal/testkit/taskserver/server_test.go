package taskserver

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/protocol"
)

// client posts requests to a Server as a 2026-07-28 client that declares
// the tasks extension (or not).
type client struct {
	t         *testing.T
	url       string
	extension bool
}

func (c client) body(method, params string) string {
	caps := `{}`
	if c.extension {
		caps = `{"extensions":{"` + Extension + `":{}}}`
	}
	meta := `"_meta":{"` + protocol.MetaProtocolVersion + `":"2026-07-28","` + protocol.MetaClientCapabilities + `":` + caps + `}`
	if params == "" {
		params = `{` + meta + `}`
	} else {
		params = `{` + meta + `,` + params + `}`
	}
	return `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + params + `}`
}

func (c client) post(ctx context.Context, method, params string) *http.Response {
	c.t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, strings.NewReader(c.body(method, params)))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set(protocol.HeaderMethod, method)
	var p json.RawMessage = json.RawMessage(`{` + params + `}`)
	if name, ok := protocol.PrincipalName(method, p); ok {
		req.Header.Set(protocol.HeaderName, name)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp
}

// call is one request's result, or its error as "error <code>".
func (c client) call(method, params string) map[string]any {
	c.t.Helper()
	resp := c.post(context.Background(), method, params)
	defer resp.Body.Close()
	var m struct {
		Result map[string]any
		Error  *rpcError
	}
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
	if m.Error != nil {
		return map[string]any{"error": float64(m.Error.Code)}
	}
	return m.Result
}

// A task that asks two questions stays input_required until both are
// answered, shows only what is still asked, and completes with the
// answers; a listen naming it hears each status with the listen's id, and
// nothing of another task; a cancelled task stays cancelled; without the
// extension the task methods are -32021 and a task-supporting tool runs at
// once.
func TestTaskLifecycle(t *testing.T) {
	srv := New(Options{})
	ts := httptest.NewServer(srv)
	defer ts.Close()
	defer srv.Close()
	c := client{t: t, url: ts.URL, extension: true}

	created := c.call("tools/call", `"name":"multi_input","arguments":{}`)
	id, _ := created["taskId"].(string)
	if created["resultType"] != "task" || id == "" {
		t.Fatalf("multi_input: %v, want a CreateTaskResult", created)
	}
	other := c.call("tools/call", `"name":"slow_compute","arguments":{"seconds":60}`)["taskId"].(string)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel() // a stream that stops short of what the test waits for ends it
	listen := c.post(ctx, protocol.MethodListen, `"notifications":{"taskIds":["`+id+`","unknown"]}`)
	defer listen.Body.Close()
	events := bufio.NewScanner(listen.Body)
	next := func() map[string]any {
		t.Helper()
		for events.Scan() {
			if data, ok := strings.CutPrefix(events.Text(), "data: "); ok {
				var m map[string]any
				if err := json.Unmarshal([]byte(data), &m); err != nil {
					t.Fatal(err)
				}
				return m
			}
		}
		t.Fatalf("the listen stream ended: %v", events.Err())
		return nil
	}
	ack := next()
	if ack["method"] != protocol.NotificationAcknowledged || !strings.Contains(toJSON(ack), `"taskIds":["`+id+`"]`) {
		t.Fatalf("acknowledgement %s, want it to name the known task only", toJSON(ack))
	}

	// Wait for both questions: read the task, and until it asks them, the
	// listen's next notification of it.
	var keys []string
	for {
		got := c.call("tasks/get", `"taskId":"`+id+`"`)
		inputs, _ := got["inputRequests"].(map[string]any)
		if len(inputs) == 2 {
			for k := range inputs {
				keys = append(keys, k)
			}
			break
		}
		next()
	}
	c.call("tasks/update", `"taskId":"`+id+`","inputResponses":{"`+keys[0]+`":{"action":"accept","content":{"name":"one"}}}`)
	got := c.call("tasks/get", `"taskId":"`+id+`"`)
	if inputs, _ := got["inputRequests"].(map[string]any); got["status"] != "input_required" || len(inputs) != 1 || inputs[keys[1]] == nil {
		t.Fatalf("after one answer: %v, want input_required asking only %s", got, keys[1])
	}
	c.call("tasks/update", `"taskId":"`+id+`","inputResponses":{"`+keys[1]+`":{"action":"accept","content":{"name":"two"}}}`)

	// The listen hears the task's statuses up to completed, with its id.
	for {
		n := next()
		params, _ := n["params"].(map[string]any)
		if n["method"] != NotificationMethod || params["taskId"] != id || !strings.Contains(toJSON(params), `"`+protocol.MetaSubscriptionID+`":1`) {
			t.Fatalf("notification %s, want notifications/tasks of %s for subscription 1", toJSON(n), id)
		}
		if params["status"] == "completed" {
			if !strings.Contains(toJSON(params["result"]), "answers: one, two") && !strings.Contains(toJSON(params["result"]), "answers: two, one") {
				t.Errorf("completed with %s, want both answers", toJSON(params["result"]))
			}
			break
		}
	}

	if ack := c.call("tasks/cancel", `"taskId":"`+other+`"`); ack["resultType"] != "complete" || len(ack) != 1 {
		t.Errorf("tasks/cancel: %v, want the empty ack", ack)
	}
	if got := c.call("tasks/get", `"taskId":"`+other+`"`); got["status"] != "cancelled" {
		t.Errorf("after tasks/cancel: %v, want cancelled", got)
	}

	without := client{t: t, url: ts.URL}
	if got := without.call("tasks/get", `"taskId":"`+id+`"`); got["error"] != float64(protocol.CodeMissingClientCapabilities) {
		t.Errorf("tasks/get without the extension: %v, want -32021", got)
	}
	if got := without.call("tools/call", `"name":"slow_compute","arguments":{"seconds":0}`); got["resultType"] != "complete" {
		t.Errorf("slow_compute without the extension: %v, want its result at once", got)
	}

}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
