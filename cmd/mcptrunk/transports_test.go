package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMixedTransports: stdio, streamable HTTP and SSE upstreams in one
// config, behind one trunk: the host lists and calls all three the same way,
// and a header from the config reaches the remote servers.
func TestMixedTransports(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 60*time.Second)

	remote := func(name string) *mcpserver.MCPServer {
		s := mcpserver.NewMCPServer(name, "0", mcpserver.WithToolCapabilities(false))
		s.AddTool(mcpgo.NewTool("whoami", mcpgo.WithDescription("Says which server answers.")),
			func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
				return mcpgo.NewToolResultText("I am " + name), nil
			})
		return s
	}
	tokens := make(chan string, 64)
	withToken := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case tokens <- r.Header.Get("Authorization"):
			default:
			}
			h.ServeHTTP(w, r)
		})
	}
	loopback := func(h http.Handler) *httptest.Server {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := &httptest.Server{Listener: l, Config: &http.Server{Handler: h}}
		srv.Start()
		t.Cleanup(srv.Close)
		return srv
	}
	httpSrv := loopback(withToken(mcpserver.NewStreamableHTTPServer(remote("streamable"))))
	sseSrv := loopback(nil)
	sse := mcpserver.NewSSEServer(remote("legacy"), mcpserver.WithBaseURL(sseSrv.URL))
	sseSrv.Config.Handler = withToken(sse)
	t.Cleanup(func() { _ = sse.Shutdown(context.Background()) })

	cfg := writeConfig(t, map[string]server{
		"local": notesServer(),
		"http": {"type": "http", "url": httpSrv.URL + "/mcp",
			"headers": map[string]string{"Authorization": "Bearer s3cret-token"}},
		"legacy": {"type": "sse", "url": sseSrv.URL + "/sse",
			"headers": map[string]string{"Authorization": "Bearer s3cret-token"}},
	}, nil)
	s := startHost(t, ctx, trunkCmd(newTag(t), "serve", "--config", cfg), hostConfig{sdkDefaults: true}, "")

	names := map[string]bool{}
	for tool, err := range s.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		names[tool.Name] = true
	}
	for _, want := range []string{"mcp__local__echo", "mcp__http__whoami", "mcp__legacy__whoami"} {
		if !names[want] {
			t.Errorf("%s is not listed; the trunk lists %v", want, names)
		}
	}
	for tool, want := range map[string]string{"mcp__http__whoami": "I am streamable", "mcp__legacy__whoami": "I am legacy"} {
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: tool})
		if err != nil || res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != want {
			t.Errorf("%s: %v, %v; want %q", tool, res, err, want)
		}
	}
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__local__echo", Arguments: map[string]any{"text": "stdio"}})
	if err != nil || res.Content[0].(*mcp.TextContent).Text != "stdio" {
		t.Errorf("mcp__local__echo: %v, %v", res, err)
	}
	seen := 0
drain:
	for {
		select {
		case tok := <-tokens:
			seen++
			if tok != "Bearer s3cret-token" {
				t.Errorf("a remote server got Authorization %q", tok)
			}
		default:
			break drain
		}
	}
	if seen == 0 {
		t.Error("no request reached the remote servers")
	}
	if strings.Contains(s.stderr.String(), "s3cret-token") {
		t.Error("the header's value appears in mcptrunk's log")
	}
}
