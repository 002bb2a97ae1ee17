//go:build !windows

package main

import (
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// At SIGTERM a call in flight over HTTP gets a JSON-RPC error that says
// the trunk is shutting down, as the last event of its stream: here a
// call waiting for the host's answer to its server's sampling request.
func TestHTTPShutdownAnswersCallsInFlight(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 2*time.Minute)
	cfg := writeConfig(t, map[string]server{"conformance": pin2025(server{"command": conformanceBin(t)})}, nil)
	p := startHTTPTrunk(t, ctx, cfg)
	url := p.url

	r, err := postMCP(ctx, url, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"raw","version":"0"}}}`, nil)
	if err != nil || r.status != http.StatusOK {
		t.Fatalf("initialize: %v %d %q", err, r.status, r.messages)
	}
	session := r.header.Get("Mcp-Session-Id")
	if r, err := postMCP(ctx, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, map[string]string{"Mcp-Session-Id": session}); err != nil || r.status != http.StatusAccepted {
		t.Fatalf("initialized: %v %d", err, r.status)
	}
	call := openSSE(t, sessionRequest(t, ctx, http.MethodPost, url, session,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"mcp__conformance__test_sampling","arguments":{"prompt":"hi"}}}`, nil))
	defer call.close()
	if ev, ok := call.next(); !ok || !strings.Contains(ev.data, `"sampling/createMessage"`) {
		t.Fatalf("the call's first event: %+v, want the server's sampling request", ev)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var last string
	for ev, ok := call.next(); ok; ev, ok = call.next() {
		last = ev.data
	}
	if !strings.Contains(last, `"id":7`) || !strings.Contains(last, `"error"`) || !strings.Contains(last, "shutting down") {
		t.Errorf("the call in flight at SIGTERM ended with %q, want an error that says the trunk is shutting down\n%s", last, p.stderr)
	}
}
