package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptrunk/mcptrunk/internal/testkit"
)

// everythingHTTP runs server-everything in its streamableHttp mode on
// loopback for the test and returns its MCP URL.
func everythingHTTP(t testing.TB) string {
	t.Helper()
	s, err := testkit.StartEverything(npmNode(t), testkit.EverythingIndex(npmModules), "streamableHttp", "0", t.TempDir())
	if err != nil {
		t.Fatalf("%v (run `make npm` in %s if it is not installed)", err, moduleRoot)
	}
	t.Cleanup(s.Stop)
	return "http://127.0.0.1:" + s.Port + "/mcp"
}

// bridgeHost runs `mcptrunk connect URL` under a recording go-sdk host.
func bridgeHost(t testing.TB, ctx context.Context, url string, hc hostConfig, version string) *host {
	t.Helper()
	return startHost(t, ctx, exec.Command(trunkBin, "connect", url), hc, version)
}

// TestConnectEverythingDifferential: server-everything over streamable
// HTTP, asked the same things by a go-sdk host directly and through
// `mcptrunk connect`, gives the same answers, under the same names and
// URIs: the bridge exports it as it is.
func TestConnectEverythingDifferential(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 180*time.Second)
	url := everythingHTTP(t)
	hc := hostConfig{full: true, roots: protoRoots}
	cell := diffCell{host: rev2025, direct: rev2025, wantHost: rev2025, wantDirect: rev2025}
	direct := newDiffSide("directly", httpHost(t, ctx, url, hc, cell.direct), "")
	through := newDiffSide("through mcptrunk connect", bridgeHost(t, ctx, url, hc, cell.host), "")
	compareSides(t, ctx, "everything", everythingPlan, cell, direct, through, nil)
}

// TestConnectToSharedTrunk: `mcptrunk connect` to the MCP URL of a shared
// `mcptrunk serve --http` passes the differential of server-everything
// behind it: the bridge hands on the trunk's names as they are. A shared
// trunk offers its servers sampling and elicitation but no roots (they are
// one host's), so the direct host declares none either, and
// server-everything neither asks for roots nor lists get-roots-list.
func TestConnectToSharedTrunk(t *testing.T) {
	t.Parallel()
	plan := everythingPlan
	plan.startupLog, plan.startupAgain = "", ""
	runDiffVia(t, "everything", everythingArgv(t), plan,
		diffCell{host: rev2025, direct: rev2025, wantHost: rev2025, wantDirect: rev2025},
		hostConfig{full: true, noRoots: true},
		func(t testing.TB, ctx context.Context, cfg string, hc hostConfig, version string) *host {
			shared := startHTTPTrunk(t, ctx, cfg)
			return bridgeHost(t, ctx, shared.url, hc, version)
		})
}

// headerServer is a streamable HTTP MCP server (go-sdk) that keeps the
// headers of every request it gets.
type headerServer struct {
	url string
	mu  sync.Mutex
	got []http.Header
}

func startHeaderServer(t *testing.T) *headerServer {
	t.Helper()
	server := mcp.NewServer(&mcp.Implementation{Name: "headers", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "hello", Description: "says hello"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello from the header server"}}}, nil, nil
		})
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	h := &headerServer{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.got = append(h.got, r.Header.Clone())
		h.mu.Unlock()
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	h.url = srv.URL + "/mcp"
	return h
}

func (h *headerServer) requests() []http.Header {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]http.Header(nil), h.got...)
}

// TestConnectHeaders: every request the bridge makes carries the --header
// values, one of them expanded from the environment, and the server's tool
// is called by its own name; the values are in no log line, not even at
// debug level.
func TestConnectHeaders(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 60*time.Second)
	srv := startHeaderServer(t)
	const key, token = "k3y-from-the-environment", "t0ken-given-literally"
	cmd := trunkCmd(newTag(t), "connect", "--log-level", "debug", "--name", "hdr",
		"--header", "X-Api-Key: ${MCPTRUNK_TEST_KEY}", srv.url, "--header", "Authorization:Bearer "+token)
	cmd.Env = append(cmd.Env, "MCPTRUNK_TEST_KEY="+key)
	c := startRaw(t, "mcptrunk connect", cmd)
	c.initialize(ctx)
	tools := keysOf(t, c.list(ctx, "tools/list", "tools"), "name")
	if !contains(tools, "hello") {
		t.Fatalf("tools/list through the bridge: %q, want the server's hello as it is", tools)
	}
	res := c.result(ctx, "tools/call", map[string]any{"name": "hello", "arguments": map[string]any{}})
	if !strings.Contains(string(res), "hello from the header server") {
		t.Errorf("hello through the bridge: %s", res)
	}
	got := srv.requests()
	if len(got) < 3 { // initialize, initialized, the list and the call at least
		t.Fatalf("the server got %d requests", len(got))
	}
	for i, h := range got {
		if h.Get("X-Api-Key") != key || h.Get("Authorization") != "Bearer "+token {
			t.Errorf("request %d carried X-Api-Key %q and Authorization %q, want the --header values", i, h.Get("X-Api-Key"), h.Get("Authorization"))
		}
	}
	c.closeStdin()
	if !c.waitExit(15 * time.Second) {
		t.Fatal("the bridge did not exit when its stdin closed")
	}
	logs := c.stderr.String()
	if !strings.Contains(logs, "server=hdr") {
		t.Errorf("the bridge's log does not name the server hdr (--name):\n%s", logs)
	}
	for _, secret := range []string{key, token} {
		if strings.Contains(logs, secret) {
			t.Errorf("the bridge logged a header value (%q):\n%s", secret, logs)
		}
	}
}

// TestConnectBadFlags: flags the bridge cannot use are refused with a
// message naming the flag or field, never a header's value: a mistake in
// the command line with status 2, a value the config refuses with 1.
func TestConnectBadFlags(t *testing.T) {
	t.Parallel()
	const secret = "s3cret-value"
	for _, tc := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{"connect"}, "connect needs URL", 2},
		{[]string{"connect", "--header", "X-Key " + secret, "http://127.0.0.1:1/mcp"}, `--header #1: want "Name: value"`, 2},
		{[]string{"connect", "--header", "A: " + secret, "--header", "a: " + secret, "http://127.0.0.1:1/mcp"}, `--header: "a" is given twice`, 2},
		{[]string{"connect", "--header", "Bad Name: " + secret, "http://127.0.0.1:1/mcp"}, `headers: invalid header name "Bad Name"`, 1},
		{[]string{"connect", "--header", "X-Key: ${MCPTRUNK_SURELY_UNSET}", "http://127.0.0.1:1/mcp"}, `headers.X-Key: variable "MCPTRUNK_SURELY_UNSET" is not set`, 1},
		{[]string{"connect", "ftp://example.com/" + secret}, `url: must be an absolute http:// or https:// URL`, 1},
		{[]string{"connect", "--sse", "--type", "http", "http://127.0.0.1:1/mcp"}, `--sse and --type "http" disagree`, 2},
		{[]string{"connect", "--name", "a__b", "http://127.0.0.1:1/mcp"}, `server "a__b": name may not contain "__"`, 1},
		{[]string{"connect", "--protocol-version", "1999-01-01", "http://127.0.0.1:1/mcp"}, `server "127_0_0_1": protocolVersion`, 1},
	} {
		_, errOut, code := runCLI(t, 30*time.Second, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("mcptrunk %s: exit %d, want %d and %q in:\n%s", strings.Join(tc.args, " "), code, tc.code, tc.want, errOut)
		}
		if strings.Contains(errOut, secret) {
			t.Errorf("mcptrunk %s: the message quotes a header value or the URL:\n%s", strings.Join(tc.args, " "), errOut)
		}
	}
}
