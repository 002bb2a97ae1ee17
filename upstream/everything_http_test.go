package upstream

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/testkit"
)

// The reference server of the MCP project (@modelcontextprotocol/server-
// everything, a TypeScript SDK server) in its streamableHttp and sse modes,
// bound to 127.0.0.1 on a port of its own choosing. It comes from
// testdata/npm (make npm); without it these tests fail and say so.

// everythingLoopback is preloaded into node: it makes every listen bind
// 127.0.0.1 (the server binds all interfaces otherwise) and reports the
// port it got.
const everythingLoopback = `
const net = require('net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === 'number' || typeof args[0] === 'string') {
    if (typeof args[1] === 'string') args[1] = '127.0.0.1'; else args.splice(1, 0, '127.0.0.1');
  } else if (args[0] && typeof args[0] === 'object') {
    args[0] = Object.assign({}, args[0], { host: '127.0.0.1' });
  }
  this.once('listening', () => {
    const a = this.address();
    process.stderr.write('MCPTRUNK_LISTENING ' + a.address + ' ' + a.port + '\n');
  });
  return listen.apply(this, args);
};
`

// everythingServer is one running server-everything process.
type everythingServer struct {
	cmd  *exec.Cmd
	port string
	out  *testkit.Buffer // its stdout and stderr
	wg   sync.WaitGroup
}

func everythingIndex(t *testing.T) string {
	t.Helper()
	index, err := filepath.Abs(filepath.Join("..", "testdata", "npm", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(index); err != nil {
		t.Fatalf("@modelcontextprotocol/server-everything is not installed (%v): run `make npm` in the repository root", err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("node is not on PATH (%v): these tests run the npm server-everything", err)
	}
	return index
}

// startEverything starts server-everything in mode on port ("0": any).
func startEverything(t *testing.T, mode, port string) *everythingServer {
	t.Helper()
	index := everythingIndex(t)
	preload := filepath.Join(t.TempDir(), "loopback.cjs")
	if err := os.WriteFile(preload, []byte(everythingLoopback), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &everythingServer{out: &testkit.Buffer{}}
	s.cmd = exec.Command("node", "--require", preload, index, mode)
	s.cmd.Env = append(os.Environ(), "PORT="+port)
	s.cmd.Stdout = s.out
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("starting server-everything: %v", err)
	}
	ports := make(chan string, 1)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		re := regexp.MustCompile(`^MCPTRUNK_LISTENING (\S+) (\d+)$`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			if m := re.FindStringSubmatch(line); m != nil {
				if m[1] != "127.0.0.1" {
					fmt.Fprintf(s.out, "listening on %s, not loopback!\n", m[1])
					continue
				}
				select {
				case ports <- m[2]:
				default:
				}
				continue
			}
			fmt.Fprintln(s.out, line)
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	select {
	case s.port = <-ports:
	case <-time.After(30 * time.Second):
		s.stop()
		t.Fatalf("server-everything %s did not start listening on 127.0.0.1:\n%s", mode, s.out)
	}
	return s
}

func (s *everythingServer) stop() {
	_ = s.cmd.Process.Kill()
	s.wg.Wait()
	_ = s.cmd.Wait()
}

func TestServerEverythingRemote(t *testing.T) {
	for _, m := range []struct{ typ, mode, path string }{
		{"http", "streamableHttp", "/mcp"},
		{"sse", "sse", "/sse"},
	} {
		t.Run(m.typ, func(t *testing.T) {
			checkLeaks(t)
			srv := startEverything(t, m.mode, "0")
			defer srv.stop()
			th := newTestHost(t, func(method string, params json.RawMessage) (json.RawMessage, error) {
				return json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"sampled by the trunk test"},"model":"test-model","stopReason":"endTurn"}`), nil
			})
			defer th.closeHost(t)
			ctx := context.Background()
			url := "http://127.0.0.1:" + srv.port + m.path
			if err := th.StartAll(ctx, []config.Spec{remoteConfig(t, "everything", m.typ, url, "")}); err != nil {
				t.Fatalf("StartAll: %v\nserver output:\n%s", err, srv.out)
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
					return strings.Contains(srv.out.String(), "Received session termination request")
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
	url := "http://127.0.0.1:" + srv.port + "/mcp"
	if err := th.StartAll(ctx, []config.Spec{remoteConfig(t, "everything", "http", url, "")}); err != nil {
		srv.stop()
		t.Fatalf("StartAll: %v\nserver output:\n%s", err, srv.out)
	}
	c, _ := th.Client("everything")
	<-c.Settled()
	if _, err := callTool(ctx, c, "echo", map[string]any{"message": "one"}); err != nil {
		srv.stop()
		t.Fatalf("echo: %v", err)
	}
	srv.stop()
	again := startEverything(t, "streamableHttp", srv.port)
	defer again.stop()
	raw, err := callTool(ctx, c, "echo", map[string]any{"message": "two"})
	if err != nil || !strings.Contains(toolText(t, raw), "two") {
		t.Fatalf("echo after the restart: %s, %v\nserver output:\n%s", raw, err, again.out)
	}
	if st, err := c.State(); st != StateReady {
		t.Errorf("state %s (%v)", st, err)
	}
	if !strings.Contains(th.logs.String(), "new session established") {
		t.Errorf("no session renewal in the log:\n%s", th.logs.String())
	}
}
