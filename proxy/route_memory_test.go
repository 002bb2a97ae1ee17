package proxy

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
)

// The result the servers send: unknown members and odd number forms must
// reach the host as they are.
const memResult = `{"content":[{"type":"text","text":"from b"}],"x-vendor":[1, 2.50, null],"isError":false}`

// Two servers with a tool of the same name: both are exported under their
// namespace, a call reaches only its owner with the server's own name and
// the arguments as sent, the server's progress and its request to the
// client reach the host on the way, and the result comes back byte for
// byte.
func TestRouteInMemory(t *testing.T) {
	a := &memserver.Server{Tools: []json.RawMessage{memserver.Tool("search", "a's")}}
	b := &memserver.Server{Tools: []json.RawMessage{memserver.Tool("search", "b's"), memserver.Tool("only_b", "")}}
	var bCall json.RawMessage
	b.Handle = func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		if method != "tools/call" {
			return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "no %s", method)
		}
		bCall = params
		token := rawjson.MetaValue(params, "progressToken")
		if err := b.Conn().Notify("notifications/progress", json.RawMessage(`{"progressToken":`+string(token)+`,"progress":1}`)); err != nil {
			return nil, err
		}
		sampled, err := b.Conn().Call(ctx, "sampling/createMessage", json.RawMessage(`{"messages":[],"maxTokens":1}`))
		if err != nil || !strings.Contains(string(sampled), `"from the host"`) {
			return nil, jsonrpc.Errorf(jsonrpc.CodeInternalError, "sampling: %s, %v", sampled, err)
		}
		return json.RawMessage(memResult), nil
	}
	_, h := memTrunk(t, memserver.Set{"a": a, "b": b}, nil, nil, nil)
	h.answer = func(method string, _ json.RawMessage) string {
		return `{"role":"assistant","content":{"type":"text","text":"from the host"},"model":"m"}`
	}
	h.initialize(`{"sampling":{}}`)

	names := h.toolNames()
	for _, want := range []string{"mcp__a__search", "mcp__b__search", "mcp__b__only_b"} {
		if !slices.Contains(names, want) {
			t.Errorf("%s is not listed: %q", want, names)
		}
	}

	res, errObj := h.call("tools/call", `{"name":"mcp__b__search","arguments":{"q":"x y","n":[1.50]},"_meta":{"progressToken":"p1"}}`)
	if string(res) != memResult {
		t.Fatalf("the result: %s (error %s), want exactly %s", res, errObj, memResult)
	}
	if name, _ := rawjson.StringField(bCall, "name"); name != "search" {
		t.Errorf("b was called with %s, want its own name", bCall)
	}
	if !strings.Contains(string(bCall), `"arguments":{"q":"x y","n":[1.50]}`) {
		t.Errorf("b's arguments: %s, want them as sent", bCall)
	}
	if got := h.seenMethods(); !slices.Contains(got, "notifications/progress") || !slices.Contains(got, "sampling/createMessage") {
		t.Errorf("the host was sent %q, want the progress and the sampling request", got)
	}
	for _, m := range h.seen {
		if strings.Contains(string(m["method"]), "progress") && !strings.Contains(string(m["params"]), `"progressToken":"p1"`) {
			t.Errorf("progress: %s, want the host's own token", m["params"])
		}
	}
	if slices.Contains(a.Received(), "tools/call") {
		t.Errorf("a received %q: the call was b's", a.Received())
	}
}

// A name that no server owns is refused with an error naming what is
// missing, and no server is called. (A bare name one server has, such as
// "search" here, is an app's call and routes: TestAppCallsRouting.)
func TestRouteUnknownInMemory(t *testing.T) {
	a := &memserver.Server{Tools: []json.RawMessage{memserver.Tool("search", "")}}
	_, h := memTrunk(t, memserver.Set{"a": a}, nil, nil, nil)
	h.initialize(`{}`)
	for name, want := range map[string]string{
		"mcp__c__search": `\"c\"`,
		"mcp__a__nope":   `nope`,
		"nope":           `nope`,
	} {
		res, errObj := h.call("tools/call", `{"name":"`+name+`","arguments":{}}`)
		if res != nil || !strings.Contains(string(errObj), want) {
			t.Errorf("%s: %s %s, want an error naming %s", name, res, errObj, want)
		}
	}
	if slices.Contains(a.Received(), "tools/call") {
		t.Errorf("a was called: %q", a.Received())
	}
}

// A server's list change is announced to a host that read the list, and
// the next list has the new tool.
func TestListChangedInMemory(t *testing.T) {
	a := &memserver.Server{Tools: []json.RawMessage{memserver.Tool("one", "")}}
	_, h := memTrunk(t, memserver.Set{"a": a}, nil, nil, nil)
	h.initialize(`{}`)
	if names := h.toolNames(); !slices.Contains(names, "mcp__a__one") {
		t.Fatalf("tools: %q", names)
	}
	if err := a.SetTools(memserver.Tool("one", ""), memserver.Tool("two", "")); err != nil {
		t.Fatal(err)
	}
	for line := h.next("tools/list_changed"); !strings.Contains(line, `"notifications/tools/list_changed"`); line = h.next("tools/list_changed") {
	}
	if names := h.toolNames(); !slices.Contains(names, "mcp__a__two") {
		t.Errorf("tools after the change: %q", names)
	}
}
