package proxy

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
	"github.com/mcptrunk/mcptrunk/proxy/tasks"
)

// A 2026-07-28 host's subscriptions/listen naming its task: the trunk has
// the server report that task's status on a listen of its own (with the
// server's id and the extension declared), acknowledges the host's id, and
// delivers the server's notifications/tasks to that listen alone, with the
// host's id, the listen's subscriptionId and the inlined result's URIs
// exported. Another caller's listen hears only its own task; naming a task
// it was not given is left out of its acknowledgement; without the
// extension the listen is -32021.
func TestTasksExtensionStatusOnListen(t *testing.T) {
	var (
		mu      sync.Mutex
		created int
		watched []string // the task ids of each listen the server got, joined
	)
	listening := make(chan struct{}, 4)
	srv := &memserver.Server{
		Revision:     protocol.Stateless,
		Capabilities: json.RawMessage(`{"tools":{},"extensions":{"` + tasks.Extension + `":{}}}`),
		Tools:        []json.RawMessage{json.RawMessage(`{"name":"slow","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}}`)},
	}
	srv.Handle = func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		switch method {
		case "tools/call":
			mu.Lock()
			created++
			id := "srv-" + string(rune('0'+created))
			mu.Unlock()
			return json.RawMessage(`{"resultType":"task","taskId":"` + id + `","status":"working","createdAt":"2026-12-04T00:00:00Z","lastUpdatedAt":"2026-12-04T00:00:00Z","ttlMs":60000}`), nil
		case protocol.MethodListen:
			if !tasks.DeclaresExtension(rawjson.MetaValue(params, protocol.MetaClientCapabilities)) {
				return nil, jsonrpc.Errorf(protocol.CodeMissingClientCapabilities, "task notifications need the extension")
			}
			var p struct {
				Notifications struct {
					TaskIDs []string `json:"taskIds"`
				} `json:"notifications"`
			}
			_ = json.Unmarshal(params, &p)
			mu.Lock()
			watched = append(watched, strings.Join(p.Notifications.TaskIDs, ","))
			mu.Unlock()
			ack, _ := json.Marshal(map[string]any{"notifications": map[string]any{"taskIds": p.Notifications.TaskIDs}})
			if err := srv.Conn().Notify(protocol.NotificationAcknowledged, ack); err != nil {
				return nil, err
			}
			listening <- struct{}{}
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "no %s", method)
	}
	tr, _ := memTrunk(t, memserver.Set{"v2": srv}, map[string]map[string]any{"v2": {"protocolVersion": "2026-07-28"}}, nil, nil)
	caller := func(subject string) *memHost {
		return &memHost{pipeHost: runPipes(t, func(ctx context.Context, in io.Reader, out io.Writer) error {
			return tr.Attach(jsonrpc.NewLineReader(in), jsonrpc.NewLineWriter(out), &SessionOptions{PerRequest: true, Subject: subject}).Run(ctx)
		})}
	}
	withTasks := statelessMeta(`{"extensions":{"` + tasks.Extension + `":{}}}`)
	// listen opens a listen on h for ids and returns its acknowledgement.
	listen := func(h *memHost, sub string, ids ...string) string {
		t.Helper()
		h.send(`{"jsonrpc":"2.0","id":"` + sub + `","method":"subscriptions/listen","params":{"notifications":{"taskIds":["` + strings.Join(ids, `","`) + `"]},` + withTasks + `}}`)
		return h.next("the acknowledgement of " + sub)
	}
	taskOf := func(h *memHost) string {
		t.Helper()
		res, errObj := h.call("tools/call", `{"name":"mcp__v2__slow","arguments":{},`+withTasks+`}`)
		id, _ := rawjson.StringField(res, "taskId")
		if id == "" {
			t.Fatalf("tools/call: %s %s", res, errObj)
		}
		return id
	}

	alice, bob := caller("alice"), caller("bob")
	aliceTask, bobTask := taskOf(alice), taskOf(bob)
	if ack := listen(alice, "LA", aliceTask); !strings.Contains(ack, `"taskIds":["`+aliceTask+`"]`) || !strings.Contains(ack, `"`+protocol.MetaSubscriptionID+`":"LA"`) {
		t.Fatalf("alice's acknowledgement: %s", ack)
	}
	<-listening
	if ack := listen(bob, "LB", bobTask, aliceTask); !strings.Contains(ack, `"taskIds":["`+bobTask+`"]`) {
		t.Fatalf("bob's acknowledgement: %s, want his task alone", ack)
	}
	<-listening
	mu.Lock()
	if got := strings.Join(watched, " "); got != "srv-1 srv-2" {
		t.Errorf("the server was asked to report on %q, want srv-1 (alice's) and srv-2 (bob's), each on a listen of its own", got)
	}
	mu.Unlock()

	notify := func(id string) {
		t.Helper()
		if err := srv.Conn().Notify(tasks.NotificationMethod, json.RawMessage(`{"taskId":"`+id+`","status":"completed","result":{"content":[{"type":"resource_link","uri":"file:///`+id+`.txt","name":"out"}]}}`)); err != nil {
			t.Fatal(err)
		}
	}
	notify("srv-1")
	notify("srv-2")
	// Notifications leave the server in order and reach each host in
	// order: bob's first one being his own task's proves alice's never
	// reached him.
	for _, c := range []struct {
		h         *memHost
		sub, task string
		uri       string
	}{{alice, "LA", aliceTask, "mcptrunk://v2/file:///srv-1.txt"}, {bob, "LB", bobTask, "mcptrunk://v2/file:///srv-2.txt"}} {
		got := c.h.next("a task status for " + c.sub)
		if !strings.Contains(got, `"method":"notifications/tasks"`) || !strings.Contains(got, `"taskId":"`+c.task+`"`) ||
			!strings.Contains(got, `"`+protocol.MetaSubscriptionID+`":"`+c.sub+`"`) || !strings.Contains(got, c.uri) {
			t.Errorf("listen %s got %s, want notifications/tasks of %s with its subscriptionId and %s", c.sub, got, c.task, c.uri)
		}
	}

	carol := caller("carol")
	carol.send(`{"jsonrpc":"2.0","id":"LC","method":"subscriptions/listen","params":{"notifications":{"taskIds":["` + aliceTask + `"]},` + statelessMeta(`{}`) + `}}`)
	if got := carol.next("the answer to a listen without the extension"); !strings.Contains(got, `"code":-32021`) {
		t.Errorf("a listen for task status without the extension: %s, want -32021", got)
	}
}
