//go:build linux || darwin

package httpserve

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/proxy"
)

// BenchmarkRemoteCall is make bench's http workload in one process: a
// go-sdk client's sequential tools/call to a go-sdk streamable HTTP server
// (2025-11-25 sessions) directly, through httputil.ReverseProxy, and
// through the trunk with the server as a remote upstream, over loopback
// sockets: the three sides run in one process, one after another, so the
// ratios between them are read from one run. cpu-ns/op is the process's
// user and system time per call (the client's and the server's with the
// hop's): a hop's own CPU is its side's less the direct side's, which the
// load of a shared machine changes less than it changes wall time.
func BenchmarkRemoteCall(b *testing.B) {
	b.Setenv("XDG_CACHE_HOME", b.TempDir()) // the catalog cache
	srv := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "answers at once"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
	})
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	b.Cleanup(up.Close)

	target, _ := url.Parse(up.URL)
	rp := httptest.NewServer(httputil.NewSingleHostReverseProxy(target))
	b.Cleanup(rp.Close)

	cfg, err := config.Parse(strings.NewReader(`{"mcpServers":{"up":{"type":"http","url":"`+up.URL+`"}}}`),
		func(string) (string, bool) { return "", false })
	if err != nil {
		b.Fatal(err)
	}
	tr := proxy.New(cfg, &proxy.Options{})
	tr.Share()
	tr.Start([]byte(`{}`), protocol.Revision2025)
	h := New(tr, Options{})
	trunk := httptest.NewServer(h)
	b.Cleanup(func() {
		trunk.Close()
		h.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = tr.Close(ctx)
	})

	for _, side := range []struct{ name, url, tool string }{
		{"direct", up.URL, "echo"},
		{"reverse-proxy", rp.URL, "echo"},
		{"trunk", trunk.URL + DefaultPath, "mcp__up__echo"},
	} {
		b.Run(side.name, func(b *testing.B) {
			ctx := context.Background()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).
				Connect(ctx, &mcp.StreamableClientTransport{Endpoint: side.url, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: protocol.Revision2025})
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			call := func() {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: side.tool, Arguments: map[string]any{}})
				if err != nil || res.IsError {
					b.Fatalf("call: %v %+v", err, res)
				}
			}
			for range 200 { // warm: connections, pools, stacks
				call()
			}
			b.ReportAllocs()
			cpu := processCPU(b)
			for b.Loop() {
				call()
			}
			b.ReportMetric(float64(processCPU(b)-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// processCPU is the user and system time the process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
