package main

// The host at 2026-07-28 (docs/protocol.md, "The host at 2026-07-28"): a
// go-sdk host at its default revision and one pinned to 2025-11-25 on the
// same config, and a raw JSON-RPC host at 2026-07-28 for the exact bytes:
// server/discover, resultType and cache hints, the removed methods, and
// subscriptions/listen with its acknowledgement and notifications.

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rawStatelessMeta is the _meta every request of a raw host at version carries.
func rawStatelessMeta(version string) string {
	return `{"io.modelcontextprotocol/protocolVersion":` + mustJSON(version) +
		`,"io.modelcontextprotocol/clientCapabilities":{}` +
		`,"io.modelcontextprotocol/clientInfo":{"name":"mcptrunk-stateless-raw","version":"0"}}`
}

// withMeta adds the 2026-07-28 _meta to params (a JSON object).
func withMeta(params string) string {
	m := `"_meta":` + rawStatelessMeta("2026-07-28")
	if strings.TrimSpace(params) == "{}" {
		return "{" + m + "}"
	}
	return strings.TrimSuffix(strings.TrimSpace(params), "}") + "," + m + "}"
}

// subscriptionID is the io.modelcontextprotocol/subscriptionId of a
// notification's params, compacted ("" when absent).
func subscriptionID(t testing.TB, note json.RawMessage) string {
	t.Helper()
	var n struct {
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if err := json.Unmarshal(note, &n); err != nil {
		t.Fatalf("notification %s: %v", note, err)
	}
	return string(n.Params.Meta["io.modelcontextprotocol/subscriptionId"])
}

// notesFor are the notifications with method for the listen with id.
func notesFor(t testing.TB, c *rawConn, method, id string) []json.RawMessage {
	var out []json.RawMessage
	for _, n := range rawNotes(c, method) {
		if subscriptionID(t, n) == id {
			out = append(out, n)
		}
	}
	return out
}

// TestStatelessHostSDK: two go-sdk hosts on one config, one at its default
// (2026-07-28: server/discover, no initialize) and one pinned to
// 2025-11-25, each sees its own revision, and lists, calls, prompts and
// reads work for both.
func TestStatelessHostSDK(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 90*time.Second)
	cfg := writeConfig(t, map[string]server{"notes": notesServer(), "conformance": {"command": conformanceBin(t)}}, nil)
	// Both trunks run at once, on the one config.
	hosts := map[string]*host{}
	for _, version := range []string{"", "2025-11-25"} {
		hosts[version] = trunkHost(t, ctx, cfg, hostConfig{full: true, roots: protoRoots}, version)
	}
	for version, h := range hosts {
		want := version
		if want == "" {
			want = "2026-07-28"
		}
		t.Run(want, func(t *testing.T) {
			if got := h.InitializeResult().ProtocolVersion; got != want {
				t.Fatalf("negotiated %q, want %q", got, want)
			}
			if info := h.InitializeResult().ServerInfo; info == nil || info.Name != "mcptrunk" {
				t.Errorf("serverInfo %+v, want mcptrunk's", info)
			}
			caps := h.InitializeResult().Capabilities
			if caps == nil || caps.Tools == nil || !caps.Tools.ListChanged || caps.Resources == nil || !caps.Resources.ListChanged {
				t.Errorf("capabilities %s, want tools and resources with listChanged", mustJSON(caps))
			}
			waitTools(t, ctx, h.ClientSession, "mcp__notes__echo", "mcp__trunk__status")
			if got := callText(t, ctx, h.ClientSession, "mcp__notes__echo", map[string]any{"text": "at " + want}); got != "at "+want {
				t.Errorf("echo: %q", got)
			}
			cat := listAll(t, ctx, h.ClientSession)
			if !contains(cat.promptNames(), "mcp__notes__summarize") || !contains(cat.resourceURIs(), "mcptrunk://notes/notes://readme") {
				t.Errorf("lists: prompts %q, resources %q", cat.promptNames(), cat.resourceURIs())
			}
			p, err := h.GetPrompt(ctx, &mcp.GetPromptParams{Name: "mcp__notes__summarize", Arguments: map[string]string{"topic": "y"}})
			if err != nil || !strings.Contains(promptText(p), `"y"`) {
				t.Errorf("prompts/get: %v %s", err, mustJSON(p))
			}
			r, err := h.ReadResource(ctx, &mcp.ReadResourceParams{URI: "mcptrunk://notes/notes://readme"})
			if err != nil || len(r.Contents) != 1 || !strings.Contains(r.Contents[0].Text, "mcptrunk-notes") {
				t.Errorf("resources/read: %v %s", err, mustJSON(r))
			}
		})
	}
}

// TestStatelessHostRaw: a raw host at 2026-07-28 gets -32022 for a revision
// the trunk does not speak, the discover result, resultType on every result
// and the trunk's cache hints on lists, -32601 for the removed methods, and,
// through subscriptions/listen, the acknowledgement, list_changed and
// resources/updated, each carrying the listen's id; a cancelled listen is
// not answered and its upstream subscription ends; shutdown answers the
// others.
func TestStatelessHostRaw(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 90*time.Second)
	cfSrv, cfTap := tapped(t, conformanceBin(t))
	cfg := writeConfig(t, map[string]server{"notes": notesServer(), "chaos": chaosServer("-mode", "ok"), "conformance": cfSrv}, nil)
	c := startRaw(t, "mcptrunk", trunkCmd(newTag(t), "serve", "--config", cfg))

	r := c.call(ctx, "server/discover", `{"_meta":`+rawStatelessMeta("2099-01-01")+`}`)
	if r.Err == nil || r.Err.Code != -32022 || !containsAll(string(r.Err.Data), `"requested":"2099-01-01"`, `"supported":["2026-07-28","2025-11-25"`) {
		t.Errorf("an unknown revision: %s %+v, want -32022 with the supported revisions", r.Result, r.Err)
	}

	res := c.result(ctx, "server/discover", withMeta(`{}`))
	if !containsAll(string(res), `"resultType":"complete"`, `"ttlMs":0`, `"cacheScope":"private"`,
		`"supportedVersions":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"]`,
		`"io.modelcontextprotocol/serverInfo":{"name":"mcptrunk"`, `"instructions":"mcptrunk aggregates`) {
		t.Errorf("server/discover: %s", res)
	}
	var disc struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}
	if err := json.Unmarshal(res, &disc); err != nil {
		t.Fatal(err)
	}
	// The conformance server offers subscriptions, logging and completions.
	if got := compact(t, disc.Capabilities["resources"]); got != `{"listChanged":true,"subscribe":true}` {
		t.Errorf("resources capability %s", got)
	}
	if disc.Capabilities["logging"] == nil || disc.Capabilities["completions"] == nil || compact(t, disc.Capabilities["tools"]) != `{"listChanged":true}` {
		t.Errorf("capabilities %s", mustJSON(disc.Capabilities))
	}

	for method, field := range map[string]string{"tools/list": "tools", "prompts/list": "prompts", "resources/list": "resources", "resources/templates/list": "resourceTemplates"} {
		res := c.result(ctx, method, withMeta(`{}`))
		if getField(t, res, field) == nil || !containsAll(string(res), `"resultType":"complete"`, `"ttlMs":0`, `"cacheScope":"private"`) {
			t.Errorf("%s: %s", method, tail(string(res), 300))
		}
	}
	for _, call := range []struct{ method, params, has string }{
		{"tools/call", `{"name":"mcp__notes__echo","arguments":{"text":"stateless"}}`, `stateless`},
		{"prompts/get", `{"name":"mcp__notes__summarize","arguments":{"topic":"z"}}`, `messages`},
		{"resources/read", `{"uri":"mcptrunk://notes/notes://readme"}`, `mcptrunk-notes`},
		{"tools/call", `{"name":"mcp__trunk__status","arguments":{}}`, `conformance`},
	} {
		res := c.result(ctx, call.method, withMeta(call.params))
		if getString(t, res, "resultType") != "complete" || !strings.Contains(string(res), call.has) || strings.Contains(string(res), "io.modelcontextprotocol/") {
			t.Errorf("%s %s: %s", call.method, call.params, tail(string(res), 300))
		}
	}
	for _, method := range []string{"ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"} {
		r := c.call(ctx, method, withMeta(`{"level":"info","uri":"mcptrunk://notes/notes://readme"}`))
		if r.Err == nil || r.Err.Code != -32601 || !strings.Contains(r.Err.Message, "removed in 2026-07-28") {
			t.Errorf("%s at 2026-07-28: %s %+v, want -32601 saying it was removed", method, r.Result, r.Err)
		}
	}

	// Two listens: 9001 for tools and a resource (and one URI no server
	// has), 9002 for prompts only.
	const watched = "mcptrunk://conformance/test://watched-resource"
	tools := rawSend(t, c, 9001, "subscriptions/listen", json.RawMessage(withMeta(
		`{"notifications":{"toolsListChanged":true,"resourceSubscriptions":["`+watched+`","mcptrunk://nosuch/x"]}}`)))
	prompts := rawSend(t, c, 9002, "subscriptions/listen", json.RawMessage(withMeta(`{"notifications":{"promptsListChanged":true}}`)))
	for id, want := range map[string]string{
		"9001": `{"resourceSubscriptions":["` + watched + `"],"toolsListChanged":true}`,
		"9002": `{"promptsListChanged":true}`,
	} {
		if !waitFor(ctx, 20*time.Second, func() bool { return len(notesFor(t, c, "notifications/subscriptions/acknowledged", id)) > 0 }) {
			t.Fatalf("listen %s was never acknowledged; notifications: %q", id, rawNotes(c, "notifications/subscriptions/acknowledged"))
		}
		ack := notesFor(t, c, "notifications/subscriptions/acknowledged", id)[0]
		if got := mustJSON(decode(t, getField(t, getField(t, ack, "params"), "notifications"))); got != mustJSON(decode(t, json.RawMessage(want))) {
			t.Errorf("listen %s acknowledged %s, want %s", id, got, want)
		}
	}
	// The upstream is subscribed: with resources/subscribe at 2025-11-25,
	// with a listen of its own at 2026-07-28.
	sub := cfTap.waitReceived(t, ctx, "the listen's subscription", func(m tapMsg) bool {
		return (m.Method == "resources/subscribe" || m.Method == "subscriptions/listen") && strings.Contains(string(m.Params), `"test://watched-resource"`)
	})

	// A change of chaos's tools reaches listen 9001, and not 9002. (The
	// host has read tools/list above: the trunk announces lists the host
	// has read.)
	for i := 0; i < 5 && len(notesFor(t, c, "notifications/tools/list_changed", "9001")) == 0; i++ {
		c.result(ctx, "tools/call", withMeta(fmt.Sprintf(`{"name":"mcp__chaos__redefine","arguments":{"description":"Answers pong, take %d."}}`, i)))
		c.result(ctx, "tools/list", withMeta(`{}`))
		waitFor(ctx, 2*time.Second, func() bool { return len(notesFor(t, c, "notifications/tools/list_changed", "9001")) > 0 })
	}
	if len(notesFor(t, c, "notifications/tools/list_changed", "9001")) == 0 {
		t.Errorf("no tools/list_changed for listen 9001 after chaos redefined its tool; got %q", rawNotes(c, "notifications/tools/list_changed"))
	}
	c.result(ctx, "tools/list", withMeta(`{}`)) // its answer comes after every notification queued before it
	for _, n := range rawNotes(c, "notifications/tools/list_changed") {
		if subscriptionID(t, n) != "9001" {
			t.Errorf("a tools/list_changed for a listen that did not ask: %s", n)
		}
	}

	// The conformance server updates its watched resource every 3s.
	if !waitFor(ctx, 15*time.Second, func() bool { return len(notesFor(t, c, "notifications/resources/updated", "9001")) > 0 }) {
		t.Fatalf("no resources/updated for listen 9001; got %q", rawNotes(c, "notifications/resources/updated"))
	}
	if got := getString(t, getField(t, notesFor(t, c, "notifications/resources/updated", "9001")[0], "params"), "uri"); got != watched {
		t.Errorf("resources/updated for %q, want %q", got, watched)
	}

	// Cancelling listen 9001 ends its upstream subscription, with no answer.
	c.notify("notifications/cancelled", `{"requestId":9001}`)
	cfTap.waitReceived(t, ctx, "the end of the listen's subscription", func(m tapMsg) bool {
		if sub.Method == "resources/subscribe" {
			return m.Method == "resources/unsubscribe" && strings.Contains(string(m.Params), `"test://watched-resource"`)
		}
		return m.Method == "notifications/cancelled" && strings.Contains(compact(t, m.Params), `"requestId":`+string(sub.ID))
	})
	c.result(ctx, "tools/list", withMeta(`{}`))
	select {
	case r := <-tools:
		t.Errorf("the cancelled listen was answered: %s %+v", r.Result, r.Err)
	default:
	}

	// Shutdown answers the open listen, naming it.
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case r, ok := <-prompts:
		if !ok || r.Err != nil || !containsAll(string(r.Result), `"resultType":"complete"`, `"io.modelcontextprotocol/subscriptionId":9002`) {
			t.Errorf("listen 9002 at shutdown: %s %+v (answered: %v)", r.Result, r.Err, ok)
		}
	case <-ctx.Done():
		t.Fatal("listen 9002 was not answered at shutdown")
	}
}

// TestHost2025StatelessUpstream: a 2025-11-25 host behind which an
// upstream speaks 2026-07-28 gets results without that revision's members
// (resultType, ttlMs, cacheScope) and without the upstream's reserved _meta
// keys.
func TestHost2025StatelessUpstream(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 90*time.Second)
	cfSrv, cfTap := tapped(t, conformanceBin(t))
	cfSrv["protocolVersion"] = "2026-07-28"
	cfg := writeConfig(t, map[string]server{"conformance": cfSrv}, nil)
	c, _ := rawInit(t, ctx, cfg, "2025-11-25", `{}`)
	tools := c.list(ctx, "tools/list", "tools")
	if !slices.Contains(keysOf(t, tools, "name"), "mcp__conformance__test_simple_text") {
		t.Fatalf("tools: %q", keysOf(t, tools, "name"))
	}
	if !slices.ContainsFunc(cfTap.received(), func(m tapMsg) bool { return m.Method == "server/discover" }) {
		t.Errorf("the upstream was not spoken to at 2026-07-28 (no server/discover)")
	}
	for _, call := range []struct{ method, params string }{
		{"tools/list", `{}`},
		{"resources/list", `{}`},
		{"tools/call", `{"name":"mcp__conformance__test_simple_text","arguments":{}}`},
		{"prompts/get", `{"name":"mcp__conformance__test_simple_prompt","arguments":{}}`},
		{"resources/read", `{"uri":"mcptrunk://conformance/test://static-text"}`},
	} {
		res := c.result(ctx, call.method, call.params)
		for _, bad := range []string{`"resultType"`, `"ttlMs"`, `"cacheScope"`, `io.modelcontextprotocol/`} {
			if strings.Contains(string(res), bad) {
				t.Errorf("%s to a 2025-11-25 host carries %s: %s", call.method, bad, tail(string(res), 300))
			}
		}
	}
	// The upstream did send them: the trunk removed them.
	sent := ""
	for _, m := range cfTap.sent() {
		sent += m.Raw
	}
	for _, member := range []string{`"resultType":"complete"`, `"cacheScope"`} {
		if !strings.Contains(sent, member) {
			t.Errorf("the upstream's results carry no %s: the test proves nothing of it; it sent %s", member, tail(sent, 500))
		}
	}
}
