package proxy

import (
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"go.uber.org/goleak"
)

// TestListenRoutesAndEnds: over the host's stdio, a listen is acknowledged
// with its id, gets the list_changed it asked for (and not another) with its
// subscriptionId, is not answered when cancelled, and the one left open is
// answered when the trunk shuts down; nothing is left running.
func TestListenRoutesAndEnds(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cfg, err := config.Parse(strings.NewReader(`{"mcpServers":{}}`), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	tr := New(cfg, nil)
	h := servePipes(t, tr)
	send, next, cancel := h.send, h.next, h.cancel

	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

	send(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta + `}}`)
	if l := next("the discover answer"); !strings.Contains(l, `"supportedVersions"`) {
		t.Fatalf("discover: %s", l)
	}
	send(`{"jsonrpc":"2.0","id":"tools-listen","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` + meta + `}}`)
	if l := next("the first acknowledgement"); !strings.Contains(l, `"io.modelcontextprotocol/subscriptionId":"tools-listen"`) || !strings.Contains(l, `"toolsListChanged":true`) {
		t.Fatalf("acknowledgement: %s", l)
	}
	send(`{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{"notifications":{"promptsListChanged":true},` + meta + `}}`)
	if l := next("the second acknowledgement"); !strings.Contains(l, `"io.modelcontextprotocol/subscriptionId":7`) {
		t.Fatalf("acknowledgement: %s", l)
	}
	tr.toHosts("", "notifications/tools/list_changed", nil)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + meta + `}}`) // answered after what was queued
	if l := next("tools/list_changed"); l != `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"tools-listen"}}}` {
		t.Errorf("list_changed: %s", l)
	}
	if l := next("the tools/list answer"); !strings.Contains(l, `"id":2`) || !strings.Contains(l, `"ttlMs":0`) {
		t.Errorf("after the one list_changed: %s", l)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"tools-listen"}}`)
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{` + meta + `}}`)
	if l := next("the second tools/list answer"); !strings.Contains(l, `"id":3`) {
		t.Errorf("the cancelled listen was answered, or something else came: %s", l)
	}
	cancel() // the trunk shuts down
	if l := next("the open listen's answer"); l != `{"jsonrpc":"2.0","id":7,"result":{"_meta":{"io.modelcontextprotocol/subscriptionId":7},"resultType":"complete"}}` {
		t.Errorf("at shutdown: %s", l)
	}
	if err := <-h.served; err != nil {
		t.Errorf("Serve: %v", err)
	}
	_ = h.in.Close()
	for l := range h.lines {
		t.Errorf("after shutdown: %s", l)
	}
}
