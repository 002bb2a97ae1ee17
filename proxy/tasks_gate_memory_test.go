package proxy

import (
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
	"github.com/mcptrunk/mcptrunk/proxy/tasks"
)

// A 2026-07-28 host is answered by the trunk as a server of the extension
// answers: tasks/list and tasks/result, which the extension removed, are
// -32601, and tasks/get, tasks/update and tasks/cancel without the
// extension declared are -32021 naming it (even with an id the trunk
// issued); no server is asked. With the extension, the same id routes.
func TestTasksExtensionStatelessGate(t *testing.T) {
	srv, got := taskServerV2()
	_, h := memTrunk(t, memserver.Set{"v2": srv}, map[string]map[string]any{"v2": {"protocolVersion": "2026-07-28"}}, nil, nil)
	withTasks := statelessMeta(`{"extensions":{"` + tasks.Extension + `":{}}}`)
	res, errObj := h.call("tools/call", `{"name":"mcp__v2__slow","arguments":{},`+withTasks+`}`)
	id, _ := rawjson.StringField(res, "taskId")
	if id == "" {
		t.Fatalf("tools/call: %s %s", res, errObj)
	}
	for _, method := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		_, errObj := h.call(method, `{"taskId":"`+id+`","inputResponses":{},`+statelessMeta(`{}`)+`}`)
		if !strings.Contains(string(errObj), `"code":-32021`) || !strings.Contains(string(errObj), `"requiredCapabilities":{"extensions":{"`+tasks.Extension+`":{}}}`) {
			t.Errorf("%s without the extension: %s, want -32021 naming it", method, errObj)
		}
	}
	for _, method := range []string{"tasks/list", "tasks/result"} {
		if _, errObj := h.call(method, `{"taskId":"`+id+`",`+withTasks+`}`); !strings.Contains(string(errObj), `"code":-32601`) {
			t.Errorf("%s at 2026-07-28: %s, want -32601", method, errObj)
		}
	}
	for _, method := range []string{"tasks/get", "tasks/update", "tasks/cancel", "tasks/list", "tasks/result"} {
		if n := len(got(method)); n != 0 {
			t.Errorf("the server was asked %s %d times, want none", method, n)
		}
	}
	if res, errObj := h.call("tasks/get", `{"taskId":"`+id+`",`+withTasks+`}`); !strings.Contains(string(res), `"taskId":"`+id+`"`) {
		t.Errorf("tasks/get with the extension: %s %s, want the task under the trunk's id", res, errObj)
	}
}
