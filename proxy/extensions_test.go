package proxy

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/proxy/extensions"
)

// envExtServer, set, makes the test binary a server (see TestMain) that
// declares the extensions it holds ("" for none).
const envExtServer = "MCPTRUNK_PROXY_EXT_SERVER"

func TestMain(m *testing.M) {
	if ext, ok := os.LookupEnv(envExtServer); ok {
		runExtServer(ext)
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// runExtServer is a 2025-11-25 server on stdio that declares ext as its
// extensions and has one tool, caps, whose result is the capabilities its
// client declared at initialize.
func runExtServer(ext string) {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 1<<20)
	out := json.NewEncoder(os.Stdout)
	clientCaps := json.RawMessage(`null`)
	for in.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &m) != nil || m.ID == nil {
			continue // a notification
		}
		var result any
		switch m.Method {
		case "initialize":
			var p struct {
				Capabilities json.RawMessage `json:"capabilities"`
			}
			_ = json.Unmarshal(m.Params, &p)
			clientCaps = p.Capabilities
			caps := map[string]json.RawMessage{"tools": json.RawMessage(`{}`)}
			if ext != "" {
				caps["extensions"] = json.RawMessage(ext)
			}
			result = map[string]any{"protocolVersion": "2025-11-25", "capabilities": caps, "serverInfo": map[string]string{"name": "ext", "version": "1"}}
		case "tools/list":
			result = json.RawMessage(`{"tools":[{"name":"caps","inputSchema":{"type":"object"}}]}`)
		case "tools/call":
			text, _ := json.Marshal(string(clientCaps))
			result = json.RawMessage(`{"content":[{"type":"text","text":` + string(text) + `}]}`)
		case "ping":
			result = struct{}{}
		default:
			_ = out.Encode(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "not here"}})
			continue
		}
		_ = out.Encode(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result})
	}
}

// serveExt serves a trunk over ext servers, one per name, each declaring
// the extensions given for it, to a host on pipes; the trunk and its
// servers are gone when the test ends.
func serveExt(t *testing.T, servers map[string]string) *pipeHost {
	t.Helper()
	h := servePipes(t, extTrunk(t, servers))
	t.Cleanup(func() {
		h.cancel()
		if err := <-h.served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return h
}

// extTrunk is a trunk over ext servers.
func extTrunk(t *testing.T, servers map[string]string) *Trunk {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	entries := map[string]any{}
	for name, ext := range servers {
		entries[name] = map[string]any{"command": exe, "env": map[string]string{envExtServer: ext}}
	}
	doc, _ := json.Marshal(map[string]any{"mcpServers": entries})
	cfg, err := config.Parse(strings.NewReader(string(doc)), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	return New(cfg, nil)
}

const (
	uiExt    = `{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}`
	hostCaps = `{"elicitation":{},"extensions":` + uiExt + `}`
)

// toolText is the text of a tools/call answer's first content block.
func toolText(t *testing.T, answer map[string]json.RawMessage) string {
	t.Helper()
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(answer["result"], &res); err != nil || len(res.Content) == 0 {
		t.Fatalf("not a tool result: %s %s", answer["result"], answer["error"])
	}
	return res.Content[0].Text
}

// A 2026-07-28 host: server/discover declares every extension a ready
// server declares (the first server's settings for one two declare), and
// the host's declared extensions reach the servers as it declared them.
func TestExtensionsStateless(t *testing.T) {
	h := serveExt(t, map[string]string{
		"a": uiExt,
		"b": `{"io.modelcontextprotocol/ui":{"mimeTypes":["other"]},"x.example/tasks":{}}`,
		"c": "",
	})
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + hostCaps + `}`
	h.send(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta + `}}`)
	var disc struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}
	if a := h.answer("1"); json.Unmarshal(a["result"], &disc) != nil {
		t.Fatalf("server/discover: %s %s", a["result"], a["error"])
	}
	want := `{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]},"x.example/tasks":{}}`
	if got := string(disc.Capabilities["extensions"]); got != want {
		t.Errorf("declared extensions %s, want %s", got, want)
	}
	h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mcp__c__caps",` + meta + `}}`)
	if got := toolText(t, h.answer("2")); !strings.Contains(got, `"extensions":`+uiExt) {
		t.Errorf("the server was told %s, want the host's extensions %s", got, uiExt)
	}
}

// A 2025-era host: the extensions it declares at initialize reach the
// servers as declared.
func TestExtensions2025(t *testing.T) {
	h := serveExt(t, map[string]string{"a": ""})
	h.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":` + hostCaps + `,"clientInfo":{"name":"t","version":"1"}}}`)
	h.answer("1")
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mcp__a__caps"}}`)
	if got := toolText(t, h.answer("2")); !strings.Contains(got, `"extensions":`+uiExt) {
		t.Errorf("the server was told %s, want the host's extensions %s", got, uiExt)
	}
}

// The 2026-07-28 tasks extension is carried as any other: declared to a host
// when a server declares it, and passed on to the servers as the host
// declared it (proxy/tasks.go routes its tasks).
func TestExtensionsTasksCarried(t *testing.T) {
	tasksExt := `"` + extensions.TasksExtension + `":{}`
	h := serveExt(t, map[string]string{"a": `{` + tasksExt + `,"x.example/other":{"v":1}}`, "c": ""})
	caps := `{"extensions":{"io.modelcontextprotocol/ui":{},` + tasksExt + `}}`
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}`
	h.send(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta + `}}`)
	var disc struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}
	if a := h.answer("1"); json.Unmarshal(a["result"], &disc) != nil {
		t.Fatalf("server/discover: %s %s", a["result"], a["error"])
	}
	if got := string(disc.Capabilities["extensions"]); !strings.Contains(got, tasksExt) || !strings.Contains(got, `"x.example/other":{"v":1}`) {
		t.Errorf("declared extensions %s, want the tasks extension and the other", got)
	}
	h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mcp__c__caps",` + meta + `}}`)
	if got := toolText(t, h.answer("2")); !strings.Contains(got, `"extensions":{"io.modelcontextprotocol/ui":{},`+tasksExt+`}`) {
		t.Errorf("the server was told %s, want the host's extensions as declared", got)
	}
}
