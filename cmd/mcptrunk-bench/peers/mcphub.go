package peers

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"

	"github.com/mcptrunk/mcptrunk/internal/testkit"
)

// mcpHub is ravitemer's mcp-hub (npm): one /mcp endpoint in front of the
// servers of its config, tools named SERVER__TOOL. Its host side is the
// 2024-11-05 HTTP+SSE transport (GET /mcp, POST /messages); its upstream
// side speaks streamable HTTP to a "url" server.
var mcpHub = Peer{
	Name:    "mcp-hub 4.2.1",
	Install: "npm ci --prefix testdata/npm-peers (or make bench-peers)",
	find: func(env Env) ([]string, error) {
		script, err := testkit.NPMBin(env.NPM, "mcp-hub")
		if err != nil {
			return nil, err
		}
		return []string{"node", script}, nil
	},
	start: startMCPHub,
}

// hubServer is the one server mcp-hub is configured with.
const hubServer = "conf"

// mcpHubConfig is mcp-hub's config for one streamable HTTP upstream.
func mcpHubConfig(upstream string) ([]byte, error) {
	return json.MarshalIndent(map[string]any{
		"mcpServers": map[string]any{hubServer: map[string]any{"type": "streamable-http", "url": upstream}},
	}, "", "  ")
}

// hubReady reads mcp-hub's /api/health: ready once the hub says so and
// every configured server is connected.
func hubReady(body []byte) (bool, error) {
	var h struct {
		State   string `json:"state"`
		Servers []struct {
			Name, Status string
			Error        any
		} `json:"servers"`
	}
	if err := json.Unmarshal(body, &h); err != nil {
		return false, fmt.Errorf("/api/health: %w", err)
	}
	if h.State != "ready" || len(h.Servers) == 0 {
		return false, fmt.Errorf("state %q, %d servers", h.State, len(h.Servers))
	}
	for _, s := range h.Servers {
		if s.Status != "connected" {
			return false, fmt.Errorf("server %s is %s (%v)", s.Name, s.Status, s.Error)
		}
	}
	return true, nil
}

func startMCPHub(ctx context.Context, env Env, argv []string) (*Running, error) {
	doc, err := mcpHubConfig(env.Upstream)
	if err != nil {
		return nil, err
	}
	cfg := filepath.Join(env.Dir, "mcp-hub.json")
	if err := os.WriteFile(cfg, doc, 0o644); err != nil {
		return nil, err
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	_, port, _ := net.SplitHostPort(addr)
	p, err := startProcess(append(argv, "--port", port, "--config", cfg), env)
	if err != nil {
		return nil, err
	}
	base := "http://" + addr
	err = p.waitReady(ctx, func(ctx context.Context) (bool, error) {
		body, err := get(ctx, base+"/api/health")
		if err != nil {
			return false, err
		}
		return hubReady(body)
	})
	if err != nil {
		return nil, err
	}
	return &Running{
		Note: "conformance server over streamable HTTP; host side HTTP+SSE (2024-11-05), the only one mcp-hub serves",
		URL:  base + "/mcp", SSE: true, Tool: hubServer + "__test_simple_text", p: p,
	}, nil
}

func get(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return body, nil
}
