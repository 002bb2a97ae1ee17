package main

// MCP Apps behind the trunk, with the MCP organisation's own example app
// servers from npm: what an app's host needs (the tool's ui:// URI, the HTML
// it names, the app's own calls) works as it does directly.

import (
	"context"
	"encoding/json"
	"maps"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	basicAppPkg   = "@modelcontextprotocol/server-basic-vanillajs"
	monitorAppPkg = "@modelcontextprotocol/server-system-monitor"
)

// appServer is an example app server over stdio.
func appServer(t *testing.T, pkg string) server {
	return server{"command": suiteNode(t), "args": []string{npmScript(t, pkg), "--stdio"}, "timeouts": slowTimeouts}
}

// appHTML reads uri and returns its one content, checking it is an app.
func appHTML(t *testing.T, ctx context.Context, s *mcp.ClientSession, uri string) string {
	t.Helper()
	c := readOne(t, ctx, s, uri)
	if c.MIMEType != "text/html;profile=mcp-app" || c.Text == "" {
		t.Fatalf("resources/read %s: type %q, %d bytes of text, want an app", uri, c.MIMEType, len(c.Text))
	}
	return c.Text
}

// uiMeta is a tool's _meta.ui.
func uiMeta(tool *mcp.Tool) map[string]any {
	ui, _ := tool.Meta["ui"].(map[string]any)
	return ui
}

// Two copies of server-basic-vanillajs (identical ui:// URIs; one lazy) and
// server-system-monitor behind one trunk, at both revisions: each tool
// names its own server's app, which reads back byte for byte as the server
// serves it directly; the app-only tool is listed with its visibility; the
// app's bare-name call of it routes; a bare name two servers share is
// refused naming both.
func TestAppsExampleServers(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	direct := map[string]string{}
	for _, pkg := range []string{basicAppPkg, monitorAppPkg} {
		s := startHost(t, ctx, exec.Command(suiteNode(t), npmScript(t, pkg), "--stdio"), hostConfig{sdkDefaults: true}, "")
		for tool, err := range s.Tools(ctx, nil) {
			if err != nil {
				t.Fatalf("%s: tools/list: %v", pkg, err)
			}
			if uri, _ := uiMeta(tool)["resourceUri"].(string); uri != "" {
				direct[pkg] = appHTML(t, ctx, s.ClientSession, uri)
			}
		}
		if direct[pkg] == "" {
			t.Fatalf("%s: no tool names an app", pkg)
		}
	}
	lazy := appServer(t, basicAppPkg)
	lazy["lazy"] = true // asleep: its app is read, and its tools called, by waking it
	cfg := writeConfig(t, map[string]server{
		"basic":   appServer(t, basicAppPkg),
		"basic2":  lazy,
		"monitor": appServer(t, monitorAppPkg),
	}, nil)
	t.Run("list", func(t *testing.T) {
		out, err := exec.CommandContext(ctx, trunkBin, "list", "--json", "--config", cfg).Output()
		if err != nil {
			t.Fatalf("mcptrunk list: %v", err)
		}
		var listed struct {
			Servers []struct {
				Server string
				Apps   int
			}
		}
		if err := json.Unmarshal(out, &listed); err != nil {
			t.Fatal(err)
		}
		apps := map[string]int{}
		for _, s := range listed.Servers {
			apps[s.Server] = s.Apps
		}
		if want := map[string]int{"basic": 1, "basic2": 1, "monitor": 1}; !maps.Equal(apps, want) {
			t.Errorf("list --json: apps per server %v, want %v", apps, want)
		}
	})
	httpTrunk := startHTTPTrunk(t, ctx, cfg)
	for _, rev := range []string{"2025-11-25", "2026-07-28"} {
		t.Run("stdio "+rev, func(t *testing.T) {
			checkApps(t, ctx, trunkHost(t, ctx, cfg, hostConfig{sdkDefaults: true}, rev).ClientSession, direct)
		})
		t.Run("http "+rev, func(t *testing.T) {
			client := mcp.NewClient(&mcp.Implementation{Name: "mcptrunk-e2e", Version: "0"}, nil)
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: httpTrunk.url}, &mcp.ClientSessionOptions{ProtocolVersion: rev})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			checkApps(t, ctx, cs, direct)
		})
	}
}

// checkApps checks what one host sees of the three app servers; direct
// is each package's app HTML as the server serves it.
func checkApps(t *testing.T, ctx context.Context, s *mcp.ClientSession, direct map[string]string) {
	tools := map[string]*mcp.Tool{}
	for tool, err := range s.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		tools[tool.Name] = tool
	}
	for name, want := range map[string]struct{ uri, pkg string }{
		"mcp__basic__get-time":          {"ui://basic/get-time/mcp-app.html", basicAppPkg},
		"mcp__basic2__get-time":         {"ui://basic2/get-time/mcp-app.html", basicAppPkg},
		"mcp__monitor__get-system-info": {"ui://monitor/system-monitor/mcp-app.html", monitorAppPkg},
	} {
		tool := tools[name]
		if tool == nil {
			t.Errorf("tools/list has no %s", name)
			continue
		}
		ui := uiMeta(tool)
		if ui["resourceUri"] != want.uri {
			t.Errorf("%s: _meta.ui.resourceUri %v, want %s", name, ui["resourceUri"], want.uri)
			continue
		}
		if flat, ok := tool.Meta["ui/resourceUri"]; ok && flat != want.uri {
			t.Errorf("%s: _meta[ui/resourceUri] %v, want %s", name, flat, want.uri)
		}
		if html := appHTML(t, ctx, s, want.uri); html != direct[want.pkg] {
			t.Errorf("%s: the app read through the trunk (%d bytes) differs from the server's own (%d bytes)", name, len(html), len(direct[want.pkg]))
		}
	}
	if tools["mcp__monitor__poll-system-stats"] == nil {
		t.Fatalf("tools/list has no mcp__monitor__poll-system-stats")
	}
	if v, _ := uiMeta(tools["mcp__monitor__poll-system-stats"])["visibility"].([]any); len(v) != 1 || v[0] != "app" {
		t.Errorf("poll-system-stats: _meta.ui.visibility %v, want [app] as the server lists it", v)
	}
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "poll-system-stats"})
	if err != nil || res.IsError {
		t.Fatalf("the app's bare-name call of poll-system-stats: %v %+v", err, res)
	}
	_, err = s.CallTool(ctx, &mcp.CallToolParams{Name: "get-time"})
	if err == nil || !strings.Contains(err.Error(), `"mcp__basic__get-time" (server "basic")`) || !strings.Contains(err.Error(), `"mcp__basic2__get-time" (server "basic2")`) {
		t.Errorf("get-time, which basic and basic2 both have: %v, want an error naming both", err)
	}
}
