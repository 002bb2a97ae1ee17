package translate

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/upstream"
)

// What the trunk declares follows the ready servers: subscribe, logging,
// completions and extensions only when one offers them; instructions
// under each server's name, bounded.
func TestDescribedFromReadyServers(t *testing.T) {
	none := DiscoveredCapabilities(nil)
	for _, k := range []string{"logging", "completions", "extensions"} {
		if _, ok := none[k]; ok {
			t.Errorf("no servers: %s declared", k)
		}
	}
	ready := []Ready{
		{Name: "a", Init: upstream.InitResult{Capabilities: upstream.Capabilities{Logging: true},
			RawCapabilities: json.RawMessage(`{"logging":{},"extensions":{"x":{"v":1}}}`), Instructions: "use a"}},
		{Name: "b", Init: upstream.InitResult{Instructions: strings.Repeat("b", maxServerInstructions+10)}},
	}
	caps := DiscoveredCapabilities(ready)
	if _, ok := caps["logging"]; !ok {
		t.Errorf("logging not declared: %v", caps)
	}
	if ext, _ := caps["extensions"].(json.RawMessage); string(ext) != `{"x":{"v":1}}` {
		t.Errorf("extensions %s", ext)
	}
	if ext, _ := InitializeCapabilities(ready)["extensions"].(json.RawMessage); string(ext) != `{"x":{"v":1}}` {
		t.Errorf("initialize's extensions %s", ext)
	}
	// A 2025-11-25 server's tasks: the core capability to a 2025-era host,
	// the extension alone to a 2026-07-28 one (its revision has no other).
	tasks2025 := []Ready{{Name: "t", Init: upstream.InitResult{RawCapabilities: json.RawMessage(`{"tasks":{"cancel":{},"requests":{"tools":{"call":{}}}}}`)}}}
	if _, ok := DiscoveredCapabilities(tasks2025)["tasks"]; ok {
		t.Error("server/discover declares the core tasks capability, which 2026-07-28 has not")
	}
	if ext, _ := DiscoveredCapabilities(tasks2025)["extensions"].(json.RawMessage); !strings.Contains(string(ext), "io.modelcontextprotocol/tasks") {
		t.Errorf("server/discover does not declare the tasks extension for a server of core tasks: %s", ext)
	}
	if _, ok := InitializeCapabilities(tasks2025)["tasks"]; !ok {
		t.Error("initialize does not declare the core tasks capability of a 2025-11-25 server")
	}
	text := DiscoveredInstructions(ready)
	if !strings.HasPrefix(text, ownInstructions) || !strings.Contains(text, "\n\na: use a") || !strings.HasSuffix(text, "…") {
		t.Errorf("instructions %q", text)
	}
}

// The trunk's own instructions never name a tool by a full name: a host
// that prefixes the trunk's tools would offer no tool of that name (the
// model that follows them gets "no such tool").
func TestInstructionsNameNoFullToolName(t *testing.T) {
	text := DiscoveredInstructions(nil)
	for _, full := range []string{"mcp__trunk__status", "mcp__trunk__wait_for_servers", "mcp__<server>__<name>"} {
		if strings.Contains(text, full) {
			t.Errorf("the instructions name %s, which a prefixing host does not offer:\n%s", full, text)
		}
	}
	if !strings.Contains(text, "trunk__status") {
		t.Errorf("the instructions do not point to the status tool:\n%s", text)
	}
}
