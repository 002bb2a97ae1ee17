package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestBadUpstream: one upstream that cannot work never takes the trunk or
// the good upstream down. The good one's tools are listed and callable, the
// bad one's calls fail with an error naming it, `mcptrunk check` fails and
// says which server and why, and the trunk's log names it.
func TestBadUpstream(t *testing.T) {
	t.Parallel()
	// A request to a server that is restarting waits timeouts.restart for
	// it (10s by default) before it fails: the broken server never comes
	// back, so the test does not wait it out for each request.
	fast := map[string]any{"connect": "2s", "restart": "1ms"}
	cases := []struct {
		name    string
		spec    server
		reasons []string // check's line for the server says one of these
	}{
		{"missing-command", server{"command": "mcptrunk-e2e-no-such-command", "timeouts": fast},
			[]string{`command "mcptrunk-e2e-no-such-command" not found: it is in no directory of PATH`}},
		{"exit", server{"command": chaosBin, "args": []string{"-mode", "exit"}, "timeouts": fast},
			[]string{"exit status 3", "exiting on purpose"}},
		{"garbage", server{"command": chaosBin, "args": []string{"-mode", "garbage"}, "timeouts": fast},
			[]string{"timeouts.connect", "not JSON", "no answer"}},
		{"hang-init", server{"command": chaosBin, "args": []string{"-mode", "hang-init"}, "timeouts": fast},
			[]string{"timeouts.connect", "no answer"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t, 60*time.Second)
			cfg := writeConfig(t, map[string]server{"good": notesServer(), "broken": tc.spec}, nil)

			s := connectTrunk(t, ctx, cfg)
			var names []string
			for tool, err := range s.Tools(ctx, nil) {
				if err != nil {
					t.Fatalf("tools/list: %v\nstderr:\n%s", err, tail(s.stderr.String(), 3000))
				}
				names = append(names, tool.Name)
			}
			for _, want := range []string{"mcp__good__echo", "mcp__good__get_note", "mcp__good__rich", "mcp__good__search"} {
				if !contains(names, want) {
					t.Errorf("%s is not listed next to a broken server: %q", want, names)
				}
			}
			for _, n := range names {
				if strings.HasPrefix(n, "mcp__broken__") {
					t.Errorf("the broken server has a tool listed: %s", n)
				}
			}
			res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__good__echo", Arguments: map[string]any{"text": "still here"}})
			if err != nil || toolText(res) != "still here" {
				t.Errorf("mcp__good__echo next to a broken server: %v %v", err, res)
			}
			if _, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: "mcptrunk://good/notes://note/1"}); err != nil {
				t.Errorf("reading the good server's resource: %v", err)
			}

			for _, name := range []string{"mcp__broken__x", "mcp__broken__ping_tool"} {
				_, err = s.CallTool(ctx, &mcp.CallToolParams{Name: name})
				if err == nil {
					t.Errorf("%s: no error", name)
				} else if msg := strings.ReplaceAll(err.Error(), name, ""); !strings.Contains(msg, "broken") {
					t.Errorf("%s: error %q does not name the server apart from the tool name", name, err)
				}
			}
			_, err = s.ReadResource(ctx, &mcp.ReadResourceParams{URI: "mcptrunk://broken/x://y"})
			if err == nil || !strings.Contains(strings.ReplaceAll(err.Error(), "mcptrunk://broken/x://y", ""), "broken") {
				t.Errorf("reading the broken server's resource: %v, want an error naming the server", err)
			}

			_ = s.Close()
			if line := logLineNaming(s.stderr.String(), "broken"); line == "" {
				t.Errorf("mcptrunk's stderr has no warning or error naming the broken server:\n%s", tail(s.stderr.String(), 3000))
			} else {
				t.Logf("log: %s", line)
			}
			assertNoProcesses(t, s.tag, 10*time.Second)

			stdout, stderr, code := runCLI(t, 30*time.Second, "check", "--config", cfg)
			if code == 0 {
				t.Errorf("mcptrunk check exited 0 with a broken server\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
			}
			line := tableLine(stdout, "broken")
			if line == "" || !containsAny(line, []string{"failed", "restarting"}) {
				t.Errorf("mcptrunk check does not report the broken server as failed:\n%s", stdout)
			} else if !containsAny(line, tc.reasons) {
				t.Errorf("mcptrunk check's line for the broken server gives no reason (want one of %q):\n%s", tc.reasons, line)
			}
			if good := tableLine(stdout, "good"); !strings.Contains(good, "ready") {
				t.Errorf("mcptrunk check does not report the good server as ready:\n%s", stdout)
			}
		})
	}
}

// TestStubbornUpstreamKilled: an upstream that ignores stdin EOF (and, in
// the second case, SIGTERM too) is still ended when mcptrunk shuts down
// while it is running. Its connect timeout is long, so it is still in its
// handshake at shutdown; startupWait is short, so the good server's tools
// answer meanwhile.
func TestStubbornUpstreamKilled(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"ignore-eof", []string{"-mode", "hang-init", "-ignore-eof"}},
		{"ignore-eof-and-sigterm", []string{"-mode", "hang-init", "-ignore-eof", "-ignore-sigterm"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			needProc(t)
			ctx := testCtx(t, 60*time.Second)
			cfg := writeConfig(t, map[string]server{
				"good":     notesServer(),
				"stubborn": {"command": chaosBin, "args": tc.args, "timeouts": map[string]any{"connect": "50s"}},
			}, map[string]any{"startupWait": "1s"})
			c := startRawTrunk(t, ctx, cfg)
			stubborn := func(p procInfo) bool { return tagged(c.tag)(p) && p.exe == chaosBin }
			waitCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			if err := eventually(waitCtx, 20*time.Millisecond, func() error {
				if len(processes(stubborn)) != 1 {
					return errors.New("the stubborn server is not running")
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			res := c.result(ctx, "tools/call", map[string]any{"name": "mcp__good__echo", "arguments": map[string]any{"text": "hi"}})
			if !strings.Contains(string(res), `"hi"`) {
				t.Errorf("mcp__good__echo while the other server hangs: %s", res)
			}
			if len(processes(stubborn)) != 1 {
				t.Fatalf("the stubborn server ended before shutdown; the test proves nothing")
			}

			start := time.Now()
			c.closeStdin()
			if !c.waitExit(15 * time.Second) {
				t.Fatalf("mcptrunk did not exit within 15s of stdin EOF\nstderr:\n%s", tail(c.stderr.String(), 3000))
			}
			t.Logf("mcptrunk exited %s after stdin EOF", time.Since(start).Round(time.Millisecond))
			if left := processes(tagged(c.tag)); len(left) > 0 {
				t.Errorf("still running after mcptrunk exited: %v", left)
			}
			assertNoProcesses(t, c.tag, 2*time.Second)
		})
	}
}

// logLineNaming returns the first warning or error line that mentions
// server.
func logLineNaming(stderr, server string) string {
	for _, line := range strings.Split(stderr, "\n") {
		if strings.Contains(line, server) && containsAny(line, []string{"ERR", "WRN", "WARN", "ERROR", "failed"}) {
			return line
		}
	}
	return ""
}

// tableLine returns the status table line that starts with server.
func tableLine(out, server string) string {
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == server {
			return line
		}
	}
	return ""
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
