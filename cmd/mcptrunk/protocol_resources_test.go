package main

// Protocol fidelity (see protocol_server_requests_test.go): resource
// subscriptions and the URIs inside results.

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestProtocolSubscriptions: resources/subscribe and unsubscribe reach the
// owner with the raw URI, and notifications/resources/updated comes back
// with the namespaced URI.
func TestProtocolSubscriptions(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 120*time.Second)
	evSrv, evTap := tapped(t, everythingArgv(t)...)
	evSrv["timeouts"] = slowTimeouts
	cfSrv, cfTap := tapped(t, conformanceBin(t))
	cfSrv = pin2025(cfSrv) // its tap checks resources/subscribe, a 2025-11-25 request
	cfg := writeConfig(t, map[string]server{"everything": evSrv, "conformance": cfSrv}, map[string]any{"startupWait": "60s"})
	h := trunkHost(t, ctx, cfg, hostConfig{}, "")

	var doc string
	for r, err := range h.Resources(ctx, nil) {
		if err != nil {
			t.Fatalf("resources/list: %v", err)
		}
		if strings.HasPrefix(r.URI, "mcptrunk://everything/demo://resource/static/document/") && doc == "" {
			doc = r.URI
		}
	}
	if doc == "" {
		t.Fatal("server-everything lists no static document")
	}
	rawDoc := strings.TrimPrefix(doc, "mcptrunk://everything/")
	const watched = "mcptrunk://conformance/test://watched-resource"
	updates := func(uri string) int {
		n := 0
		for _, u := range h.rec.updatedSnapshot() {
			if u == uri {
				n++
			}
		}
		return n
	}
	subscribed := func(tp *tap, method, uri string) {
		t.Helper()
		tp.waitReceived(t, ctx, method+" "+uri, func(m tapMsg) bool {
			return m.Method == method && compact(t, m.Params) == `{"uri":`+mustJSON(uri)+`}`
		})
	}

	// The conformance server updates test://watched-resource every 3s for
	// its subscribers.
	if err := h.Subscribe(ctx, &mcp.SubscribeParams{URI: watched}); err != nil {
		t.Fatalf("subscribe %s: %v", watched, err)
	}
	subscribed(cfTap, "resources/subscribe", "test://watched-resource")

	// server-everything sends updates for subscribed URIs once
	// toggle-subscriber-updates starts them (at once, then every 5s).
	if err := h.Subscribe(ctx, &mcp.SubscribeParams{URI: doc}); err != nil {
		t.Fatalf("subscribe %s: %v", doc, err)
	}
	subscribed(evTap, "resources/subscribe", rawDoc)
	callText(t, ctx, h.ClientSession, "mcp__everything__toggle-subscriber-updates", nil)
	if !waitFor(ctx, 10*time.Second, func() bool { return updates(doc) > 0 }) {
		t.Errorf("no notifications/resources/updated for %s; got %q", doc, h.rec.updatedSnapshot())
	}
	callText(t, ctx, h.ClientSession, "mcp__everything__toggle-subscriber-updates", nil) // off again

	if !waitFor(ctx, 10*time.Second, func() bool { return updates(watched) > 0 }) {
		t.Errorf("no notifications/resources/updated for %s; got %q", watched, h.rec.updatedSnapshot())
	}
	for _, u := range h.rec.updatedSnapshot() {
		if u != doc && u != watched {
			t.Errorf("an update for a URI the host never subscribed to, or not namespaced: %q", u)
		}
	}

	// Unsubscribing reaches both owners with the raw URI, and updates stop.
	if err := h.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: doc}); err != nil {
		t.Fatalf("unsubscribe %s: %v", doc, err)
	}
	subscribed(evTap, "resources/unsubscribe", rawDoc)
	if err := h.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: watched}); err != nil {
		t.Fatalf("unsubscribe %s: %v", watched, err)
	}
	subscribed(cfTap, "resources/unsubscribe", "test://watched-resource")
	n := updates(doc)
	callText(t, ctx, h.ClientSession, "mcp__everything__toggle-subscriber-updates", nil) // sends at once to subscribers
	callText(t, ctx, h.ClientSession, "mcp__everything__toggle-subscriber-updates", nil)
	// An update sent at once comes before the call's result: once what
	// was read is recorded, it would be counted.
	h.rec.settle(ctx)
	if m := updates(doc); m != n {
		t.Errorf("updates for %s after unsubscribing: %d, then %d", doc, n, m)
	}
}

// TestProtocolResultURIs: URIs inside results (resource links and embedded
// resources in tool results and prompt messages) come back in the
// mcptrunk://<server>/ form, with every other byte as the upstream sent
// it, and can be read back through the trunk.
func TestProtocolResultURIs(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 120*time.Second)
	argv := everythingArgv(t)
	cfg := writeConfig(t, map[string]server{
		"notes":       notesServer(),
		"weather":     weatherServer(),
		"everything":  {"command": argv[0], "args": argv[1:], "timeouts": slowTimeouts},
		"conformance": {"command": conformanceBin(t)},
	}, map[string]any{"startupWait": "60s"})
	trunk := startRawTrunk(t, ctx, cfg)
	direct := map[string]*rawConn{
		"notes":       startRawDirect(t, ctx, "notes", notesBin),
		"weather":     startRawDirect(t, ctx, "weather", weatherBin),
		"everything":  startRawDirect(t, ctx, "everything", argv...),
		"conformance": startRawDirect(t, ctx, "conformance", conformanceBin(t)),
	}

	// readBack reads a namespaced URI through the trunk and its raw URI
	// directly; both must succeed with the same contents apart from the uri.
	readBack := func(t *testing.T, server, uri string) {
		t.Helper()
		raw, ok := strings.CutPrefix(uri, "mcptrunk://"+server+"/")
		if !ok {
			t.Errorf("%q is not in %s's namespace", uri, server)
			return
		}
		got := trunk.result(ctx, "resources/read", map[string]string{"uri": uri})
		want := direct[server].result(ctx, "resources/read", map[string]string{"uri": raw})
		gotItems, wantItems := getField(t, got, "contents"), getField(t, want, "contents")
		var g, w []json.RawMessage
		_ = json.Unmarshal(gotItems, &g)
		_ = json.Unmarshal(wantItems, &w)
		if len(g) == 0 || len(g) != len(w) {
			t.Errorf("reading %s back: %s; directly %s", uri, got, want)
			return
		}
		for i := range g {
			if getString(t, g[i], "uri") != uri {
				t.Errorf("reading %s back: contents uri %q", uri, getString(t, g[i], "uri"))
			}
			// server-everything stamps its dynamic resources with the time.
			if server != "everything" {
				sameExceptField(t, "read back "+uri, w[i], g[i], "uri", raw, uri)
			}
		}
	}

	// checkContent compares one content block through the trunk with the
	// same block directly and returns the namespaced URI it carries ("" for
	// none).
	checkContent := func(t *testing.T, server string, d, g json.RawMessage) string {
		t.Helper()
		switch getString(t, g, "type") {
		case "resource_link":
			uri := getString(t, g, "uri")
			sameExceptField(t, "a resource_link", d, g, "uri", getString(t, d, "uri"), "mcptrunk://"+server+"/"+getString(t, d, "uri"))
			return uri
		case "resource":
			dr, gr := getField(t, d, "resource"), getField(t, g, "resource")
			var rewritten int
			dm, gm := decode(t, dr), decode(t, gr)
			unnamespace(t, gm, server, &rewritten)
			if server == "everything" { // it stamps resources with the time
				dm, gm = normaliseEverything(t, dm), normaliseEverything(t, gm)
			}
			if rewritten != 1 || mustJSON(dm) != mustJSON(gm) {
				t.Errorf("an embedded resource:\ndirectly:          %s\nthrough the trunk: %s", dr, gr)
			}
			a, b := objectFields(t, d), objectFields(t, g)
			if len(a) != len(b) {
				t.Errorf("an embedded resource block gained or lost members: %s -> %s", d, g)
			}
			return getString(t, gr, "uri")
		default:
			if compact(t, d) != compact(t, g) {
				t.Errorf("a %s block changed:\ndirectly:          %s\nthrough the trunk: %s", getString(t, g, "type"), d, g)
			}
		}
		return ""
	}

	type call struct {
		name, server, method, field, direct, through string
		readable                                     bool
	}
	calls := []call{
		{"notes rich", "notes", "tools/call", "content", `{"name":"rich","arguments":{}}`, `{"name":"mcp__notes__rich","arguments":{}}`, true},
		{"everything resource links", "everything", "tools/call", "content", `{"name":"get-resource-links","arguments":{"count":4}}`, `{"name":"mcp__everything__get-resource-links","arguments":{"count":4}}`, true},
		{"everything resource reference", "everything", "tools/call", "content", `{"name":"get-resource-reference","arguments":{"resourceType":"Text","resourceId":3}}`, `{"name":"mcp__everything__get-resource-reference","arguments":{"resourceType":"Text","resourceId":3}}`, true},
		{"conformance embedded resource", "conformance", "tools/call", "content", `{"name":"test_multiple_content_types","arguments":{}}`, `{"name":"mcp__conformance__test_multiple_content_types","arguments":{}}`, false},
		{"weather prompt", "weather", "prompts/get", "messages", `{"name":"plan_trip","arguments":{"city":"Oslo"}}`, `{"name":"mcp__weather__plan_trip","arguments":{"city":"Oslo"}}`, true},
		{"everything prompt", "everything", "prompts/get", "messages", `{"name":"resource-prompt","arguments":{"resourceType":"Blob","resourceId":"2"}}`, `{"name":"mcp__everything__resource-prompt","arguments":{"resourceType":"Blob","resourceId":"2"}}`, true},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			d := direct[c.server].result(ctx, c.method, c.direct)
			g := trunk.result(ctx, c.method, c.through)
			var dItems, gItems []json.RawMessage
			if err := json.Unmarshal(getField(t, d, c.field), &dItems); err != nil {
				t.Fatalf("directly: %s", d)
			}
			if err := json.Unmarshal(getField(t, g, c.field), &gItems); err != nil || len(gItems) != len(dItems) {
				t.Fatalf("through the trunk: %s\ndirectly: %s", g, d)
			}
			var uris []string
			for i := range dItems {
				dc, gc := dItems[i], gItems[i]
				if c.field == "messages" {
					a, b := objectFields(t, dc), objectFields(t, gc)
					if len(a) != len(b) {
						t.Errorf("a prompt message gained or lost members: %s -> %s", dc, gc)
					}
					for j := range min(len(a), len(b)) {
						if a[j].key != b[j].key || (a[j].key != "content" && compact(t, a[j].value) != compact(t, b[j].value)) {
							t.Errorf("a prompt message changed: %s -> %s", dc, gc)
						}
					}
					dc, gc = getField(t, dc, "content"), getField(t, gc, "content")
				}
				if u := checkContent(t, c.server, dc, gc); u != "" {
					uris = append(uris, u)
				}
			}
			if len(uris) == 0 {
				t.Fatalf("no URI in %s", g)
			}
			t.Logf("URIs: %q", uris)
			if c.readable {
				for _, u := range uris {
					readBack(t, c.server, u)
				}
			}
		})
	}
}
