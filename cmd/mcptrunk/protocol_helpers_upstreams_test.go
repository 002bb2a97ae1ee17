package main

// Upstreams built from source for the protocol-fidelity tests
// (protocol_*_test.go) and the differential tests (differential_test.go):
// go-sdk's conformance everything-server and a probe server, each built
// once per run into binDir, so the leak check covers them. The npm
// server-everything is in helpers_npm_test.go.

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/testkit"
)

// conformanceBin returns the path of go-sdk's conformance everything-server,
// built into binDir by TestMain.
func conformanceBin(t testing.TB) string {
	t.Helper()
	path, err := testkit.ConformanceServer(binDir)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// probeSource is a small go-sdk stdio server that sends what the other
// upstreams never do: a URL-mode elicitation followed by
// notifications/elicitation/complete, an elicitation it abandons (so it
// sends notifications/cancelled for its own request), and a ping to its
// client. It is built from this source by buildProbe.
const probeSource = `package main

import (
	"context"
	"fmt"
	"log"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// progress the client sent for this server's own requests.
var (
	mu       sync.Mutex
	progress []string
	// last has a value once as many notifications as their total arrived.
	last = make(chan struct{}, 1)
)

type idArgs struct {
	ID string ` + "`json:\"id\"`" + `
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func main() {
	s := mcp.NewServer(&mcp.Implementation{Name: "probe", Version: "0"}, &mcp.ServerOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationServerRequest) {
			mu.Lock()
			progress = append(progress, fmt.Sprintf("%v:%v/%v", req.Params.ProgressToken, req.Params.Progress, req.Params.Total))
			n := len(progress)
			mu.Unlock()
			if req.Params.Total > 0 && float64(n) >= req.Params.Total {
				select {
				case last <- struct{}{}:
				default:
				}
			}
		},
	})
	mcp.AddTool(s, &mcp.Tool{Name: "sampling_with_progress", Description: "sampling with progressToken 7; returns the progress the client sent for it"},
		func(ctx context.Context, req *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, any, error) {
			p := &mcp.CreateMessageParams{MaxTokens: 10, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "progress please"}}}}
			p.SetProgressToken(7)
			select { // a signal left from an earlier call
			case <-last:
			default:
			}
			if _, err := req.Session.CreateMessage(ctx, p); err != nil {
				return nil, nil, err
			}
			// The client sends its progress before its answer, but go-sdk
			// hands each notification to the handler on a goroutine of its
			// own: wait until as many arrived as their total says, at most 2 s.
			select {
			case <-last:
			case <-time.After(2 * time.Second):
			case <-ctx.Done():
			}
			mu.Lock()
			got := strings.Join(progress, " ")
			progress = nil
			mu.Unlock()
			return text("progress: " + got), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "url_elicitation", Description: "URL-mode elicitation, then elicitation/complete"},
		func(ctx context.Context, req *mcp.CallToolRequest, in idArgs) (*mcp.CallToolResult, any, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Mode: "url", URL: "https://example.com/consent", Message: "Please consent", ElicitationID: in.ID})
			if err != nil {
				return nil, nil, err
			}
			if err := req.Session.NotifyElicitationComplete(ctx, &mcp.ElicitationCompleteParams{ElicitationID: in.ID}); err != nil {
				return nil, nil, err
			}
			return text("action=" + res.Action), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "abandoned_elicitation", Description: "asks, then gives up after 300ms"},
		func(ctx context.Context, req *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, any, error) {
			ectx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			defer cancel()
			_, err := req.Session.Elicit(ectx, &mcp.ElicitParams{Message: "block: never mind", RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"type": "string"}}}})
			return text(fmt.Sprintf("gave up: %v", err)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "ping_client", Description: "pings the client"},
		func(ctx context.Context, req *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, any, error) {
			return text(fmt.Sprintf("ping: %v", req.Session.Ping(ctx, nil))), nil, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Print(err)
	}
}
`

// buildProbe builds probeSource into binDir, once per run (TestMain).
var buildProbe = sync.OnceValues(func() (string, error) { return buildServerSource("probe", probeSource) })

// buildServerSource builds a test server's one-file source into binDir as
// mcptrunk-<name>, in the module root (the module's go-sdk).
func buildServerSource(name, source string) (string, error) {
	dir := filepath.Join(binDir, name+"-src")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte(source), 0o644); err != nil {
		return "", err
	}
	path := filepath.Join(binDir, "mcptrunk-"+name)
	if err := testkit.GoBuild(moduleRoot, "-o", path, src); err != nil {
		return "", fmt.Errorf("building the %s server: %w", name, err)
	}
	return path, nil
}

// probeBin returns the path of the probe server, built by TestMain.
func probeBin(t testing.TB) string {
	t.Helper()
	path, err := buildProbe()
	if err != nil {
		t.Fatal(err)
	}
	return path
}
