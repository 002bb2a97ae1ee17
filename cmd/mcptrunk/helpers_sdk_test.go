package main

//lint:file-ignore SA1019 roots, sampling and logging are deprecated by the 2026-07-28 revision (SEP-2577), but the trunk still carries them for 2025-era hosts and servers, and these tests keep that working.

// The official go-sdk as the host of a process over its stdio.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// host is the official go-sdk as the host of a process over its stdio:
// an independent client, for the tests whose point is what a real host
// gets. It records what it receives (hostRec) and answers sampling,
// elicitation and roots as its hostConfig says.
type host struct {
	*mcp.ClientSession
	*proc              // nil over HTTP
	stderr *syncBuffer // the process's; empty over HTTP
	client *mcp.Client
	rec    *hostRec
}

// startHost starts cmd under a recording go-sdk host. version pins the
// protocol revision ("" is the SDK's default, which probes server/discover
// first). The session is closed at the end of the test, then the process
// must exit and leave nothing behind (startProc).
func startHost(t testing.TB, ctx context.Context, cmd *exec.Cmd, cfg hostConfig, version string) *host {
	t.Helper()
	client, rec, sessOpts := recordingClient(cfg, version)
	return dialHost(t, ctx, cmd, client, rec, sessOpts, cfg.maxLine)
}

// dialHost starts cmd (startProc) and connects client to it over its
// stdio, reading frames up to maxLine bytes (0: go-sdk's default, what a
// go-sdk host reads). rec, when not nil, is told how many log, progress
// and resource-update notifications arrive on the wire (hostRec.settle).
func dialHost(t testing.TB, ctx context.Context, cmd *exec.Cmd, client *mcp.Client, rec *hostRec, opts *mcp.ClientSessionOptions, maxLine int) *host {
	t.Helper()
	name := filepath.Base(cmd.Path)
	p := startProc(t, name, cmd, procOptions{pipes: true})
	var tr mcp.Transport = &mcp.IOTransport{Reader: p.stdout, Writer: p.stdin, MaxLineLength: maxLine}
	if rec != nil {
		tr = countingTransport{Transport: tr, rec: rec}
	}
	cs, err := client.Connect(ctx, tr, opts)
	if err != nil {
		t.Fatalf("connecting to %s: %v\nstderr:\n%s", strings.Join(cmd.Args, " "), err, tail(p.stderr.String(), 3000))
	}
	// Registered after startProc's cleanup, so run before it: the session
	// closes the process's stdin, which is how a host ends it.
	t.Cleanup(func() { _ = cs.Close() })
	return &host{ClientSession: cs, proc: p, stderr: p.stderr, client: client, rec: rec}
}

// httpHost is a recording go-sdk host of the MCP server at url, over
// streamable HTTP on a client of its own. The session is closed at the end
// of the test.
func httpHost(t testing.TB, ctx context.Context, url string, hc hostConfig, version string) *host {
	t.Helper()
	client, rec, opts := recordingClient(hc, version)
	hc2 := httpClient(t)
	hc2.Transport = countingRoundTripper{next: hc2.Transport, rec: rec}
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc2}, opts)
	if err != nil {
		t.Fatalf("connecting to %s at %q: %v", url, version, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return &host{ClientSession: cs, stderr: &syncBuffer{}, client: client, rec: rec}
}

// httpClient is an HTTP client of its own, its idle connections closed at
// the end of the test.
func httpClient(t testing.TB) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// countingTransport counts, in rec.read, the log, progress and
// resource-update notifications its connection reads, before go-sdk hands
// them on.
type countingTransport struct {
	mcp.Transport
	rec *hostRec
}

func (c countingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := c.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return countingConn{Connection: conn, rec: c.rec}, nil
}

type countingConn struct {
	mcp.Connection
	rec *hostRec
}

func (c countingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && !req.IsCall() &&
		(req.Method == "notifications/message" || req.Method == "notifications/progress" || req.Method == "notifications/resources/updated") {
		c.rec.read.Add(1)
	}
	return msg, err
}

// countingRoundTripper counts, in rec.read, the log, progress and
// resource-update notifications in the bodies of the responses it carries,
// as go-sdk reads them: over HTTP the connection cannot be wrapped (go-sdk's streamable
// client needs its own connection type to open the standalone stream).
type countingRoundTripper struct {
	next http.RoundTripper
	rec  *hostRec
}

func (c countingRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(req)
	if err == nil {
		resp.Body = &countingBody{ReadCloser: resp.Body, rec: c.rec}
	}
	return resp, err
}

// notificationMarks are what a log, progress or resource-update
// notification carries.
var notificationMarks = [][]byte{[]byte(`"method":"notifications/message"`), []byte(`"method":"notifications/progress"`), []byte(`"method":"notifications/resources/updated"`)}

// countingBody counts notificationMarks in what is read through it, a
// mark split across two reads included.
type countingBody struct {
	io.ReadCloser
	rec   *hostRec
	carry []byte
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		buf := append(b.carry, p[:n]...)
		for _, m := range notificationMarks {
			// Only a mark that ends in the new bytes is new.
			for i := 0; ; {
				j := bytes.Index(buf[i:], m)
				if j < 0 {
					break
				}
				if i+j+len(m) > len(b.carry) {
					b.rec.read.Add(1)
				}
				i += j + 1
			}
		}
		// Keep what could begin a mark.
		keep := len(notificationMarks[2]) - 1 // the longest
		b.carry = append([]byte(nil), buf[max(0, len(buf)-keep):]...)
	}
	return n, err
}

// recordingClient is the go-sdk client of a host that records what it
// gets, with the session options that pin version ("": the SDK's default).
func recordingClient(cfg hostConfig, version string) (*mcp.Client, *hostRec, *mcp.ClientSessionOptions) {
	rec := newHostRec()
	client := mcp.NewClient(&mcp.Implementation{Name: "mcptrunk-e2e", Version: "0"}, hostOptions(rec, cfg))
	client.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			rec.mu.Lock()
			rec.received[method]++
			rec.mu.Unlock()
			return next(ctx, method, req)
		}
	})
	if cfg.full && len(cfg.roots) > 0 {
		client.AddRoots(cfg.roots...)
	}
	var sessOpts *mcp.ClientSessionOptions
	if version != "" {
		sessOpts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	return client, rec, sessOpts
}

// trunkHost runs `mcptrunk serve` on cfg under a recording go-sdk host.
func trunkHost(t testing.TB, ctx context.Context, cfg string, hc hostConfig, version string) *host {
	t.Helper()
	return startHost(t, ctx, exec.Command(trunkBin, "serve", "--config", cfg), hc, version)
}

// directHost runs an upstream directly under a recording go-sdk host.
func directHost(t testing.TB, ctx context.Context, argv []string, hc hostConfig, version string) *host {
	t.Helper()
	return startHost(t, ctx, exec.Command(argv[0], argv[1:]...), hc, version)
}

// connectTrunk is trunkHost with go-sdk's default capabilities and
// revision.
func connectTrunk(t testing.TB, ctx context.Context, cfg string) *host {
	t.Helper()
	return trunkHost(t, ctx, cfg, hostConfig{sdkDefaults: true}, "")
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
