package main

// The official go-sdk as the host of a process over its stdio.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkSession is a go-sdk client session to a process, with that process's
// stderr.
type sdkSession struct {
	*mcp.ClientSession
	stderr *syncBuffer
	tag    string
}

// dialSDK starts cmd, its processes marked with a fresh tag and its stderr
// kept, and connects client to it over the go-sdk's CommandTransport; opts
// are the session's (nil: the SDK's defaults). At the end of the test the
// session is closed, then afterClose (if not nil) checks what is left.
// connectSDK and connectHost differ only in the client they pass and in
// afterClose. (fltStartHost does not come here: it needs frames larger than
// CommandTransport reads.)
func dialSDK(t testing.TB, ctx context.Context, client *mcp.Client, cmd *exec.Cmd, opts *mcp.ClientSessionOptions, afterClose func(*sdkSession)) *sdkSession {
	t.Helper()
	tag := newTag(t)
	cmd.Env = append(os.Environ(), tagEnv+"="+tag)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 10 * time.Second}, opts)
	if err != nil {
		t.Fatalf("connecting to %s: %v\nstderr:\n%s", strings.Join(cmd.Args, " "), err, tail(stderr.String(), 3000))
	}
	s := &sdkSession{ClientSession: cs, stderr: stderr, tag: tag}
	t.Cleanup(func() {
		_ = cs.Close()
		if afterClose != nil {
			afterClose(s)
		}
	})
	return s
}

// connectSDK connects a go-sdk client to the command. The session is closed
// at the end of the test.
func connectSDK(t testing.TB, ctx context.Context, cmd *exec.Cmd, opts *mcp.ClientOptions) *sdkSession {
	t.Helper()
	if opts == nil {
		opts = &mcp.ClientOptions{}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcptrunk-e2e", Version: "0"}, opts)
	return dialSDK(t, ctx, client, cmd, nil, func(s *sdkSession) {
		if cmd.Path == trunkBin {
			checkNoRace(t, s.stderr)
		}
	})
}

// connectTrunk runs `mcptrunk serve --config cfg` with the SDK as the host.
func connectTrunk(t testing.TB, ctx context.Context, cfg string) *sdkSession {
	t.Helper()
	return connectSDK(t, ctx, exec.Command(trunkBin, "serve", "--config", cfg), nil)
}

// connectTrunkAt is connectTrunk with the host pinned to a protocol
// revision (go-sdk's default is 2026-07-28): a test that compares results
// through the trunk with those of a direct 2025-11-25 session pins its host
// to 2025-11-25, so that both paths are at the same revision.
func connectTrunkAt(t testing.TB, ctx context.Context, cfg, version string) *sdkSession {
	t.Helper()
	cmd := exec.Command(trunkBin, "serve", "--config", cfg)
	client := mcp.NewClient(&mcp.Implementation{Name: "mcptrunk-e2e", Version: "0"}, &mcp.ClientOptions{})
	return dialSDK(t, ctx, client, cmd, &mcp.ClientSessionOptions{ProtocolVersion: version}, func(s *sdkSession) {
		checkNoRace(t, s.stderr)
	})
}

// sdkCatalog is everything a server lists, through the SDK's iterators
// (which follow cursors).
type sdkCatalog struct {
	tools     []*mcp.Tool
	prompts   []*mcp.Prompt
	resources []*mcp.Resource
	templates []*mcp.ResourceTemplate
}

func listAll(t testing.TB, ctx context.Context, s *mcp.ClientSession) sdkCatalog {
	t.Helper()
	var cat sdkCatalog
	caps := s.InitializeResult().Capabilities
	if caps.Tools != nil {
		for tool, err := range s.Tools(ctx, nil) {
			if err != nil {
				t.Fatalf("tools/list: %v", err)
			}
			cat.tools = append(cat.tools, tool)
		}
	}
	if caps.Prompts != nil {
		for p, err := range s.Prompts(ctx, nil) {
			if err != nil {
				t.Fatalf("prompts/list: %v", err)
			}
			cat.prompts = append(cat.prompts, p)
		}
	}
	if caps.Resources != nil {
		for r, err := range s.Resources(ctx, nil) {
			if err != nil {
				t.Fatalf("resources/list: %v", err)
			}
			cat.resources = append(cat.resources, r)
		}
		for r, err := range s.ResourceTemplates(ctx, nil) {
			if err != nil {
				t.Fatalf("resources/templates/list: %v", err)
			}
			cat.templates = append(cat.templates, r)
		}
	}
	return cat
}

func (c sdkCatalog) toolNames() []string {
	var out []string
	for _, x := range c.tools {
		out = append(out, x.Name)
	}
	return out
}

func (c sdkCatalog) promptNames() []string {
	var out []string
	for _, x := range c.prompts {
		out = append(out, x.Name)
	}
	return out
}

func (c sdkCatalog) resourceURIs() []string {
	var out []string
	for _, x := range c.resources {
		out = append(out, x.URI)
	}
	return out
}

func (c sdkCatalog) templateURIs() []string {
	var out []string
	for _, x := range c.templates {
		out = append(out, x.URITemplate)
	}
	return out
}

// toolNames lists a session's tools (every page).
func toolNames(t testing.TB, ctx context.Context, s *mcp.ClientSession) []string {
	t.Helper()
	var names []string
	for tool, err := range s.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		names = append(names, tool.Name)
	}
	return names
}

// waitTools waits until the session lists every tool in want and returns
// the list it saw last.
func waitTools(t testing.TB, ctx context.Context, s *mcp.ClientSession, want ...string) []string {
	t.Helper()
	var names []string
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err := eventually(wctx, 100*time.Millisecond, func() error {
		names = toolNames(t, ctx, s)
		var missing []string
		for _, w := range want {
			if !slices.Contains(names, w) {
				missing = append(missing, w)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("missing %q", missing)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("tools never listed: %v; listed: %q", err, names)
	}
	return names
}

// callText calls a tool and returns its text content, failing on an error.
func callText(t testing.TB, ctx context.Context, s *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	if args == nil {
		args = map[string]any{} // go-sdk sends null for nil, which zod-based servers reject
	}
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("calling %s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("calling %s: isError: %s", name, mustJSON(res))
	}
	return toolText(res)
}

// toolText joins the text contents of a tool result.
func toolText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
