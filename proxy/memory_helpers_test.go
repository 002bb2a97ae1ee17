package proxy

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// verifyNoLeaks fails t when goroutines other than those ignore names are
// left once the servers' ends have stopped: they stop on goroutines of
// their own after the trunk has closed its ends, so goleak alone could see
// them on their way out on a loaded machine.
func verifyNoLeaks(t *testing.T, ignore goleak.Option, servers ...*memserver.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, s := range servers {
		if err := s.Stopped(ctx); err != nil {
			t.Errorf("an in-memory server's end did not stop: %v", err)
		}
	}
	goleak.VerifyNone(t, ignore)
}

// memTrunk is a trunk whose servers are the in-memory ones of set (each
// configured by name with the extra fields of its entry in specs, if
// any; trunkOpts is the config's "trunk" object), served to a host on
// pipes. No process runs: a test of routing, translation or sessions
// takes milliseconds.
func memTrunk(t testing.TB, set memserver.Set, specs map[string]map[string]any, trunkOpts map[string]any, opts *Options) (*Trunk, *memHost) {
	t.Helper()
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the catalog cache
	if opts == nil {
		opts = &Options{}
	}
	opts.Dial = func(spec config.Spec, h jsonrpc.Handler) (upstream.Transport, error) { return set.Dial(spec, h) }
	tr := New(memConfig(t, set, specs, trunkOpts), opts)
	return tr, &memHost{pipeHost: servePipes(t, tr)}
}

// memConfig is the config memTrunk gives the trunk, also for a Reload.
func memConfig(t testing.TB, set memserver.Set, specs map[string]map[string]any, trunkOpts map[string]any) *config.Config {
	t.Helper()
	servers := map[string]any{}
	for name := range set {
		entry := map[string]any{"command": "in-memory", "protocolVersion": "2025-11-25"}
		for k, v := range specs[name] {
			entry[k] = v
		}
		servers[name] = entry
	}
	doc := map[string]any{"mcpServers": servers}
	if trunkOpts != nil {
		doc["trunk"] = trunkOpts
	}
	raw, _ := json.Marshal(doc)
	cfg, err := config.Parse(strings.NewReader(string(raw)), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// memHost is the host's side of memTrunk: it sends requests and waits for
// their answers, keeping every other line the trunk wrote meanwhile, and
// answers the trunk's requests with answer.
type memHost struct {
	*pipeHost
	nextID int
	seen   []map[string]json.RawMessage                       // the notifications and requests the trunk sent, in order
	answer func(method string, params json.RawMessage) string // a request's result; nil: an error
}

// initialize does the 2025-11-25 handshake with capabilities.
func (h *memHost) initialize(capabilities string) {
	h.t.Helper()
	res, errObj := h.call("initialize", `{"protocolVersion":"2025-11-25","capabilities":`+capabilities+`,"clientInfo":{"name":"memhost","version":"1"}}`)
	if res == nil {
		h.t.Fatalf("initialize: %s", errObj)
	}
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// call sends a request and returns its result, or its error object.
func (h *memHost) call(method, params string) (result, errObj json.RawMessage) {
	h.t.Helper()
	h.nextID++
	id := strconv.Itoa(h.nextID)
	h.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":` + params + `}`)
	for {
		line := h.next("the answer to " + method)
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			h.t.Fatalf("the trunk wrote %q: %v", line, err)
		}
		if _, isMethod := m["method"]; !isMethod && string(m["id"]) == id {
			return m["result"], m["error"]
		}
		h.seen = append(h.seen, m)
		if m["id"] != nil && m["method"] != nil {
			h.reply(m)
		}
	}
}

// reply answers a request of the trunk's.
func (h *memHost) reply(m map[string]json.RawMessage) {
	var method string
	_ = json.Unmarshal(m["method"], &method)
	if h.answer == nil {
		h.send(`{"jsonrpc":"2.0","id":` + string(m["id"]) + `,"error":{"code":-32601,"message":"no"}}`)
		return
	}
	h.send(`{"jsonrpc":"2.0","id":` + string(m["id"]) + `,"result":` + h.answer(method, m["params"]) + `}`)
}

// seenMethods lists the methods of what the trunk sent besides answers.
func (h *memHost) seenMethods() []string {
	var out []string
	for _, m := range h.seen {
		var method string
		_ = json.Unmarshal(m["method"], &method)
		out = append(out, method)
	}
	return out
}

// tools lists the exported tools by name, each as sent.
func (h *memHost) tools() map[string]json.RawMessage {
	h.t.Helper()
	res, errObj := h.call("tools/list", `{}`)
	var list struct{ Tools []json.RawMessage }
	if err := json.Unmarshal(res, &list); err != nil {
		h.t.Fatalf("tools/list: %s %s", res, errObj)
	}
	out := map[string]json.RawMessage{}
	for _, tool := range list.Tools {
		name, _ := rawjson.StringField(tool, "name")
		out[name] = tool
	}
	return out
}

// toolNames lists the exported tools' names, sorted.
func (h *memHost) toolNames() []string {
	h.t.Helper()
	return slices.Sorted(maps.Keys(h.tools()))
}
