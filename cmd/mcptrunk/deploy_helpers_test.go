//go:build !windows

package main

// What the deployment tests run: `mcptrunk serve --http` replicas on ports
// the OS picks, HAProxy with deploy/haproxy.cfg on listeners handed to it,
// its stats, and HTTP clients of both revisions.

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// needHAProxy returns the haproxy binary, or skips the test without one.
func needHAProxy(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"haproxy", "/usr/sbin/haproxy"} { // sbin may not be on a user's PATH
		if bin, err := exec.LookPath(name); err == nil {
			return bin
		}
	}
	t.Skip("haproxy is not installed (Debian: apt-get install haproxy); the tests of deploy/haproxy.cfg need it")
	return ""
}

// startDeployReplica serves cfg over HTTP on a port the OS picks, its
// processes marked with a tag of its own and env (NAME=value) added to
// its environment, and waits until it says it is ready.
func startDeployReplica(t testing.TB, ctx context.Context, name, cfg string, env ...string) *httpTrunk {
	t.Helper()
	cmd := trunkCmd(newTag(t), "serve", "--http", "127.0.0.1:0", "--config", cfg)
	cmd.Env = append(cmd.Env, env...)
	return serveHTTP(t, ctx, name, cmd)
}

// deployLB is HAProxy running deploy/haproxy.cfg in front of two replicas.
type deployLB struct {
	*proc
	url    string // the MCP endpoint through HAProxy
	stats  string // the stats page as CSV
	client *http.Client
}

// deployConfig is the HAProxy config the tests run: the one in deploy/.
func deployConfig() string { return filepath.Join(moduleRoot, "deploy", "haproxy.cfg") }

// startDeployHAProxy runs HAProxy with deploy/haproxy.cfg in front of a and
// b, its two listeners opened here on ports the OS picks and handed to it
// as file descriptors 3 and 4; replaySafe are the tools it may replay. It
// returns once HAProxy's checks found both replicas up.
func startDeployHAProxy(t testing.TB, ctx context.Context, bin, tag string, a, b *httpTrunk, replaySafe ...string) *deployLB {
	t.Helper()
	var files []*os.File
	var addrs []string
	for range 2 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		f, err := ln.(*net.TCPListener).File()
		ln.Close() // f holds its own descriptor of the socket
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
		addrs = append(addrs, ln.Addr().String())
	}
	safe := filepath.Join(t.TempDir(), "replay-safe-tools")
	if err := os.WriteFile(safe, []byte(strings.Join(replaySafe, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-db", "-f", deployConfig())
	cmd.Env = append(deployEnv(), tagEnv+"="+tag,
		"MCPTRUNK_BIND=fd@3", "HAPROXY_STATS_BIND=fd@4",
		"MCPTRUNK_REPLICA1="+a.addr, "MCPTRUNK_REPLICA2="+b.addr,
		"MCPTRUNK_REPLAY_SAFE_TOOLS="+safe)
	cmd.ExtraFiles = files
	path := strings.TrimPrefix(a.url, "http://"+a.addr)
	lb := &deployLB{proc: startProc(t, "haproxy", cmd, procOptions{stop: syscall.SIGTERM}), url: "http://" + addrs[0] + path, stats: "http://" + addrs[1] + "/stats;csv", client: httpClient(t)}
	for _, f := range files {
		f.Close()
	}
	if err := eventually(ctx, 20*time.Millisecond, func() error {
		for _, s := range []string{"replica1", "replica2"} {
			if err := lb.wantServer(ctx, s, "UP"); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatalf("haproxy: %v\nstderr:\n%s", err, tail(lb.stderr.String(), 3000))
	}
	return lb
}

// deployEnv is the test's environment without the variables
// deploy/haproxy.cfg reads, so that only what a test sets counts.
func deployEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MCPTRUNK_DNS=") && !strings.HasPrefix(kv, "MCPTRUNK_REPLICA") &&
			!strings.HasPrefix(kv, "MCPTRUNK_BIND=") && !strings.HasPrefix(kv, "HAPROXY_") {
			env = append(env, kv)
		}
	}
	return env
}

// serverStats reads the stats page: the mcptrunk backend's rows by server
// name ("BACKEND" for the backend's own), each column by its name.
func (lb *deployLB) serverStats(ctx context.Context) (map[string]map[string]string, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", lb.stats, nil)
	if err != nil {
		return nil, err
	}
	resp, err := lb.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	rows, err := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(body, []byte("# ")))).ReadAll()
	if err != nil || len(rows) < 2 {
		return nil, fmt.Errorf("stats %q: %v", tail(string(body), 500), err)
	}
	out := map[string]map[string]string{}
	for _, r := range rows[1:] {
		if len(r) < 2 || r[0] != "mcptrunk" {
			continue
		}
		fields := map[string]string{}
		for i, name := range rows[0] {
			if i < len(r) {
				fields[name] = r[i]
			}
		}
		out[r[1]] = fields
	}
	return out, nil
}

// wantServer checks that HAProxy sees server in state ("UP", "DOWN"), and
// for UP that its last check passed.
func (lb *deployLB) wantServer(ctx context.Context, server, state string) error {
	stats, err := lb.serverStats(ctx)
	if err != nil {
		return err
	}
	s := stats[server]
	if s == nil {
		return fmt.Errorf("haproxy has no server %s", server)
	}
	if s["status"] != state || (state == "UP" && !strings.Contains(s["check_status"], "L7OK")) {
		return fmt.Errorf("haproxy: %s is %q (last check %q), want %s", server, s["status"], s["check_status"], state)
	}
	return nil
}

// echoOver calls the notes server's echo through cs and checks the text
// comes back.
func echoOver(ctx context.Context, cs *mcp.ClientSession, text string) error {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__notes__echo", Arguments: map[string]any{"text": text}})
	if err != nil {
		return err
	}
	if res.IsError || len(res.Content) != 1 {
		return fmt.Errorf("echo %q: %+v", text, res)
	}
	if c, ok := res.Content[0].(*mcp.TextContent); !ok || c.Text != text {
		return fmt.Errorf("echo %q came back as %+v", text, res.Content[0])
	}
	return nil
}
