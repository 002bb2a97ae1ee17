package upstream

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/internal/testkit"
)

// startConformanceHTTP runs the conformance server as a streamable HTTP
// server (stateless unless flags say otherwise) on a free loopback port, behind a recording
// reverse proxy, and returns the URL to configure.
func startConformanceHTTP(t *testing.T, flags ...string) (string, *recorder) {
	t.Helper()
	srv, err := testkit.StartConformanceHTTP(context.Background(), conformanceServer(t), nil, flags...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Stop()
		if t.Failed() {
			t.Logf("conformance server output:\n%s", srv.Out.String())
		}
	})
	target, _ := url.Parse(strings.TrimSuffix(srv.URL, "/mcp"))
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1 // pass event streams on as they come
	tr := &http.Transport{}
	proxy.Transport = tr
	rec := &recorder{handler: proxy}
	front := httptest.NewServer(rec)
	t.Cleanup(func() {
		front.Close()
		tr.CloseIdleConnections()
	})
	return front.URL + "/mcp", rec
}

func TestStatelessStreamableHTTP(t *testing.T) {
	h := newHarness(t) // first: its leak check runs after the servers' cleanups
	url, rec := startConformanceHTTP(t)
	host := h.host(nil)
	c := startReady(t, h, host, config.Spec{
		Name: "conf", Type: config.TransportHTTP, URL: url,
		Timeouts: config.Timeouts{Connect: config.Duration(subprocWait), List: config.Duration(subprocWait), Call: config.Duration(subprocWait)},
	})
	<-c.Settled()
	ctx := ctxFor(t)
	if init := c.Init(); !init.stateless() {
		t.Fatalf("Init: protocol %q", init.ProtocolVersion)
	}
	// The server checks Mcp-Method and Mcp-Name against the body (-32020
	// on a mismatch): answers prove both.
	callJSON(t, ctx, c, "tools/call", `{"name":"test_simple_text","arguments":{}}`)
	callJSON(t, ctx, c, "resources/read", `{"uri":"test://static-text"}`)
	callJSON(t, ctx, c, "prompts/get", `{"name":"test_simple_prompt"}`)

	// The listen's reply stream stays open and carries list changes.
	const transient = "__transient_tool_for_list_changed"
	pollUntil(t, "the list listen", func() bool { return rec.count(http.MethodPost, protocol.MethodListen) > 0 })
	callJSON(t, ctx, c, "tools/call", `{"name":"test_trigger_tool_change","arguments":{}}`)
	pollUntil(t, "the catalog to list "+transient, func() bool {
		return slices.ContainsFunc(c.Catalog().Tools, func(it Item) bool { return it.Key == transient })
	})

	if err := host.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, r := range rec.all() {
		if r.method != http.MethodPost {
			t.Errorf("%s %s: a stateless connection sends only POSTs", r.method, r.path)
			continue
		}
		if sid := r.header.Get(protocol.HeaderSessionID); sid != "" {
			t.Errorf("%s carried a session id", r.rpcMethod)
		}
		if v := r.header.Get(protocol.HeaderProtocolVersion); v != protocol.Stateless {
			t.Errorf("%s: %s %q", r.rpcMethod, protocol.HeaderProtocolVersion, v)
		}
		if m := r.header.Get(protocol.HeaderMethod); m != r.rpcMethod {
			t.Errorf("%s: %s %q", r.rpcMethod, protocol.HeaderMethod, m)
		}
		if r.rpcMethod == "initialize" {
			t.Errorf("initialize sent to a stateless server")
		}
	}
	if got := rec.find(func(r recorded) bool { return r.rpcMethod == "tools/call" }); len(got) == 0 || got[0].header.Get(protocol.HeaderName) != "test_simple_text" {
		t.Errorf("tools/call: %s not the tool's name", protocol.HeaderName)
	}
}

// A stateful go-sdk server answers server/discover without the stateless
// revision among its versions: auto mode falls back to initialize on the
// same transport, which then keeps a session as before.
func TestStatefulStreamableHTTPFallsBack(t *testing.T) {
	h := newHarness(t)
	url, rec := startConformanceHTTP(t, "-stateless=false")
	host := h.host(nil)
	c := startReady(t, h, host, config.Spec{
		Name: "conf", Type: config.TransportHTTP, URL: url,
		Timeouts: config.Timeouts{Connect: config.Duration(subprocWait), List: config.Duration(subprocWait), Call: config.Duration(subprocWait)},
	})
	if init := c.Init(); init.stateless() || init.ProtocolVersion != protocol.Revision2025 {
		t.Fatalf("Init: protocol %q", init.ProtocolVersion)
	}
	callJSON(t, ctxFor(t), c, "tools/call", `{"name":"test_simple_text","arguments":{}}`)
	var methods []string
	sessions := 0
	for _, r := range rec.all() {
		if r.method == http.MethodPost {
			methods = append(methods, r.rpcMethod)
		}
		if r.rpcMethod == "tools/call" && r.header.Get(protocol.HeaderSessionID) != "" && r.header.Get(protocol.HeaderProtocolVersion) == protocol.Revision2025 {
			sessions++
		}
	}
	if len(methods) < 2 || methods[0] != protocol.MethodDiscover || methods[1] != "initialize" {
		t.Errorf("POSTs %v: want server/discover, then initialize", methods)
	}
	if sessions != 1 {
		t.Errorf("the tools/call went without the session and its revision")
	}
}
