package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/testkit"
)

// The reference server of the MCP project (@modelcontextprotocol/server-
// everything, a TypeScript SDK server) in its streamableHttp and sse modes,
// bound to 127.0.0.1 (testkit.StartEverything). It comes from testdata/npm
// (make npm); without it these tests fail and say so.

// everythingIndex is the server's entry point, with node on PATH to run it.
func everythingIndex(t *testing.T) string {
	t.Helper()
	modules, err := filepath.Abs(filepath.Join("..", "testdata", "npm", "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	index := testkit.EverythingIndex(modules)
	if _, err := os.Stat(index); err != nil {
		t.Fatalf("@modelcontextprotocol/server-everything is not installed (%v): run `make npm` in the repository root", err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("node is not on PATH (%v): these tests run the npm server-everything", err)
	}
	return index
}

// startEverything starts server-everything in mode on port ("0": any).
func startEverything(t *testing.T, mode, port string) *testkit.Everything {
	t.Helper()
	s, err := testkit.StartEverything("node", everythingIndex(t), mode, port, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestServerEverythingRemote(t *testing.T) {
	for _, m := range []struct{ typ, mode, path string }{
		{"http", "streamableHttp", "/mcp"},
		{"sse", "sse", "/sse"},
	} {
		t.Run(m.typ, func(t *testing.T) {
			checkLeaks(t)
			srv := startEverything(t, m.mode, "0")
			defer srv.Stop()
			th := newTestHost(t, func(method string, params json.RawMessage) (json.RawMessage, error) {
				return json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"sampled by the trunk test"},"model":"test-model","stopReason":"endTurn"}`), nil
			})
			defer th.closeHost(t)
			ctx := context.Background()
			url := "http://127.0.0.1:" + srv.Port + m.path
			if err := th.StartAll(ctx, []config.Spec{remoteConfig(t, "everything", m.typ, url, "")}); err != nil {
				t.Fatalf("StartAll: %v\nserver output:\n%s", err, srv.Out)
			}
			c, _ := th.Client("everything")
			<-c.Settled()
			// The server registers most tools after notifications/initialized
			// and says so with list_changed.
			waitFor(t, "the full tool list", 10*time.Second, func() bool { return len(c.Catalog().Tools) >= 14 })
			cat := c.Catalog()
			if len(cat.Prompts) < 4 || len(cat.Resources) < 1 || len(cat.Templates) < 1 {
				t.Errorf("catalog: %d prompts, %d resources, %d templates", len(cat.Prompts), len(cat.Resources), len(cat.Templates))
			}

			raw, err := callTool(ctx, c, "echo", map[string]any{"message": "hello everything"})
			if err != nil || !strings.Contains(toolText(t, raw), "hello everything") {
				t.Fatalf("echo: %s, %v", raw, err)
			}
			raw, err = c.Call(ctx, "prompts/get", json.RawMessage(`{"name":"simple-prompt"}`))
			if err != nil || !strings.Contains(string(raw), "messages") {
				t.Errorf("prompts/get: %s, %v", raw, err)
			}
			params, _ := json.Marshal(map[string]string{"uri": cat.Resources[0].Key})
			raw, err = c.Call(ctx, "resources/read", params)
			if err != nil || !strings.Contains(string(raw), "contents") {
				t.Errorf("resources/read: %s, %v", raw, err)
			}

			// Progress during a call.
			raw, err = c.Call(ctx, "tools/call", json.RawMessage(`{"name":"trigger-long-running-operation","arguments":{"duration":0.3,"steps":3},"_meta":{"progressToken":"op1"}}`))
			if err != nil || !strings.Contains(toolText(t, raw), "completed") {
				t.Fatalf("long running operation: %s, %v", raw, err)
			}
			waitFor(t, "3 progress notifications", 5*time.Second, func() bool {
				n := 0
				for _, s := range th.notifications() {
					if strings.HasPrefix(s, "notifications/progress ") && strings.Contains(s, `"op1"`) {
						n++
					}
				}
				return n == 3
			})

			// A server->client request in the middle of a call.
			raw, err = callTool(ctx, c, "trigger-sampling-request", map[string]any{"prompt": "hi", "maxTokens": 5})
			if err != nil || !strings.Contains(toolText(t, raw), "sampled by the trunk test") {
				t.Fatalf("sampling: %s, %v", raw, err)
			}

			// A JSON-RPC error from the server passes through.
			_, err = c.Call(ctx, "no/such-method", json.RawMessage(`{}`))
			var rpcErr *jsonrpc.Error
			if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeMethodNotFound {
				t.Errorf("unknown method: got %v, want the server's -32601", err)
			}

			th.closeHost(t)
			if m.typ == "http" {
				waitFor(t, "the server to see the session end", 5*time.Second, func() bool {
					return strings.Contains(srv.Out.String(), "Received session termination request")
				})
			}
		})
	}
}

// The server restarts on the same port and no longer knows the session (it
// answers 400 "No valid session ID provided"): the next call renews the
// session and succeeds.
func TestServerEverythingSessionAfterRestart(t *testing.T) {
	checkLeaks(t)
	srv := startEverything(t, "streamableHttp", "0")
	th := newTestHost(t, nil)
	defer th.closeHost(t)
	ctx := context.Background()
	url := "http://127.0.0.1:" + srv.Port + "/mcp"
	if err := th.StartAll(ctx, []config.Spec{remoteConfig(t, "everything", "http", url, "")}); err != nil {
		srv.Stop()
		t.Fatalf("StartAll: %v\nserver output:\n%s", err, srv.Out)
	}
	c, _ := th.Client("everything")
	<-c.Settled()
	if _, err := callTool(ctx, c, "echo", map[string]any{"message": "one"}); err != nil {
		srv.Stop()
		t.Fatalf("echo: %v", err)
	}
	srv.Stop()
	again := startEverything(t, "streamableHttp", srv.Port)
	defer again.Stop()
	raw, err := callTool(ctx, c, "echo", map[string]any{"message": "two"})
	if err != nil || !strings.Contains(toolText(t, raw), "two") {
		t.Fatalf("echo after the restart: %s, %v\nserver output:\n%s", raw, err, again.Out)
	}
	if st, err := c.State(); st != StateReady {
		t.Errorf("state %s (%v)", st, err)
	}
	if !strings.Contains(th.logs.String(), "new session established") {
		t.Errorf("no session renewal in the log:\n%s", th.logs.String())
	}
}
