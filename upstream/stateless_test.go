package upstream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/internal/testkit"
)

// Tests of the stateless revision against go-sdk's conformance server (it
// speaks 2026-07-28 and the older revisions) and of the fallback against
// the TypeScript reference server (2025-11-25 only), all as real
// subprocesses. A shell in front of each server tees what the trunk writes
// to its stdin into a file, so a test reads the exact wire.

// conformanceServer is go-sdk's everything-server, built once per test
// binary into the directory TestMain removes at the end.
func conformanceServer(t *testing.T) string {
	t.Helper()
	path, err := testkit.ConformanceServer(testTempDir)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// modeTee is the test binary as a recorder in front of a server: it
// appends each line it reads to <dir>/<name>.in before passing it on to
// the command in its arguments, so a line is on file before the server can
// answer it; <dir>/<name>.pid holds its pid, its process group's.
const modeTee = "tee"

func runTee() int {
	dir, name := os.Getenv(envDir), os.Getenv(envName)
	if err := os.WriteFile(filepath.Join(dir, name+".pid"), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		return 2
	}
	log, err := os.OpenFile(filepath.Join(dir, name+".in"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return 2
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil || cmd.Start() != nil {
		return 2
	}
	rd := bufio.NewReaderSize(os.Stdin, 1<<16)
	for {
		line, err := rd.ReadBytes('\n')
		if len(line) > 0 {
			_, _ = log.Write(line)
			if _, werr := in.Write(line); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	_ = in.Close()
	if err := cmd.Wait(); err != nil {
		return 1
	}
	return 0
}

// teeSpec runs command behind the recorder.
func (h *harness) teeSpec(name string, command ...string) config.Spec {
	spec := h.spec(name, modeTee)
	spec.Args = command
	spec.ProtocolVersion = "" // auto: the servers here speak what they speak
	return spec
}

// wireIn is one message the trunk wrote to a server.
type wireIn struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

func (h *harness) wireIn(name string) []wireIn {
	h.t.Helper()
	b, _ := os.ReadFile(filepath.Join(h.dir, name+".in"))
	var out []wireIn
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m wireIn
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			h.t.Fatalf("the trunk wrote a line that is not JSON to %s: %q", name, sc.Text())
		}
		out = append(out, m)
	}
	return out
}

func wireMethods(msgs []wireIn) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.Method)
	}
	return out
}

// lastCall is the last request of method on the wire.
func lastCall(msgs []wireIn, method string) (wireIn, bool) {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Method == method && len(msgs[i].ID) > 0 {
			return msgs[i], true
		}
	}
	return wireIn{}, false
}

func callJSON(t *testing.T, ctx context.Context, c *Client, method string, params string) json.RawMessage {
	t.Helper()
	res, err := c.Call(ctx, method, json.RawMessage(params))
	if err != nil {
		t.Fatalf("%s %s: %v", method, params, err)
	}
	return res
}

func TestStatelessConformanceStdio(t *testing.T) {
	bin := conformanceServer(t)
	h := newHarness(t)
	host := h.host(&Options{Capabilities: json.RawMessage(`{"roots":{}}`)})
	c := startReady(t, h, host, h.teeSpec("conf", bin))
	<-c.Settled()
	ctx := ctxFor(t)

	init := c.Init()
	if !init.stateless() || init.ProtocolVersion != protocol.Stateless {
		t.Fatalf("Init: protocol %q, stateless %v; want %s", init.ProtocolVersion, init.stateless(), protocol.Stateless)
	}
	if !strings.Contains(string(init.ServerInfo), "mcp-conformance-test-server") || !init.Capabilities.Tools || !init.Capabilities.Subscribe {
		t.Errorf("Init: serverInfo %s, capabilities %+v", init.ServerInfo, init.Capabilities)
	}
	if st := c.Status(); st.Protocol != protocol.Stateless {
		t.Errorf("Status().Protocol = %q", st.Protocol)
	}
	if n := len(c.Catalog().Tools); n < 10 {
		t.Errorf("%d tools listed", n)
	}
	res := callJSON(t, ctx, c, "tools/call", `{"name":"test_simple_text","arguments":{}}`)
	if !strings.Contains(string(res), `"text"`) || !strings.Contains(string(res), `"resultType":"complete"`) {
		t.Errorf("tools/call: %s", res)
	}

	// Another hop's reserved keys never reach the server; the trunk's own
	// do, and the other _meta keys pass.
	hostCaps := json.RawMessage(`{"elicitation":{}}`)
	if _, err := c.callWith(ctx, CallOptions{Caps: hostCaps}, "tools/call",
		json.RawMessage(`{"name":"test_simple_text","arguments":{},"_meta":{"progressToken":7,"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/other":1}}`)); err != nil {
		t.Fatal(err)
	}
	// logging/setLevel is not sent: the level goes with later requests.
	callJSON(t, ctx, c, "logging/setLevel", `{"level":"debug"}`)
	callJSON(t, ctx, c, "ping", `{}`)
	callJSON(t, ctx, c, "prompts/list", `{}`)
	// A host request's own level wins, and "" asks for none.
	if _, err := c.callWith(ctx, CallOptions{Level: "error", LevelSet: true}, "resources/list", json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.callWith(ctx, CallOptions{LevelSet: true}, "resources/templates/list", json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	// Removed notifications are not sent either.
	if err := c.Notify("notifications/roots/list_changed", nil); err != nil {
		t.Fatal(err)
	}

	msgs := h.wireIn("conf")
	methods := wireMethods(msgs)
	if len(methods) == 0 || methods[0] != protocol.MethodDiscover {
		t.Errorf("first message %v, want %s", methods, protocol.MethodDiscover)
	}
	for _, m := range []string{"initialize", "notifications/initialized", "ping", "logging/setLevel", "notifications/roots/list_changed"} {
		if slices.Contains(methods, m) {
			t.Errorf("%s was sent to a stateless server: %v", m, methods)
		}
	}
	if !slices.Contains(methods, protocol.MethodListen) {
		t.Errorf("no %s for the lists: %v", protocol.MethodListen, methods)
	}
	for _, m := range msgs {
		if len(m.ID) == 0 {
			continue // a notification
		}
		if v := rawjson.MetaString(m.Params, protocol.MetaProtocolVersion); v != protocol.Stateless {
			t.Errorf("%s: protocolVersion %q", m.Method, v)
		}
		if rawjson.MetaValue(m.Params, protocol.MetaClientCapabilities) == nil {
			t.Errorf("%s carries no clientCapabilities", m.Method)
		}
		if info := rawjson.MetaValue(m.Params, protocol.MetaClientInfo); !strings.Contains(string(info), `"mcptrunk"`) {
			t.Errorf("%s: clientInfo %s", m.Method, info)
		}
		if rawjson.MetaValue(m.Params, protocol.MetaPrefix+"other") != nil {
			t.Errorf("%s: another hop's reserved key reached the server: %s", m.Method, m.Params)
		}
	}
	calls := 0
	for _, m := range msgs {
		if m.Method != "tools/call" {
			continue
		}
		calls++
		caps := string(rawjson.MetaValue(m.Params, protocol.MetaClientCapabilities))
		if calls == 2 {
			if caps != string(hostCaps) || string(rawjson.MetaValue(m.Params, "progressToken")) != "7" {
				t.Errorf("the call on the host's behalf: %s", m.Params)
			}
		} else if caps != `{"roots":{}}` {
			t.Errorf("tools/call %d: clientCapabilities %s, want the Host's", calls, caps)
		}
	}
	// ping went out as server/discover, and the level with the next request.
	if n := strings.Count(strings.Join(methods, " "), protocol.MethodDiscover); n != 2 {
		t.Errorf("%d server/discover, want 2 (connect, ping): %v", n, methods)
	}
	if m, _ := lastCall(msgs, "prompts/list"); rawjson.MetaString(m.Params, protocol.MetaLogLevel) != "debug" {
		t.Errorf("prompts/list after logging/setLevel: %s", m.Params)
	}
	if m, _ := lastCall(msgs, "resources/list"); rawjson.MetaString(m.Params, protocol.MetaLogLevel) != "error" {
		t.Errorf("resources/list with the host's level: %s", m.Params)
	}
	if m, _ := lastCall(msgs, "resources/templates/list"); rawjson.MetaValue(m.Params, protocol.MetaLogLevel) != nil {
		t.Errorf("resources/templates/list with no level: %s", m.Params)
	}
}

func TestPinned2025ConformanceStdio(t *testing.T) {
	bin := conformanceServer(t)
	h := newHarness(t)
	host := h.host(nil)
	spec := h.teeSpec("conf", bin)
	spec.ProtocolVersion = protocol.Revision2025
	c := startReady(t, h, host, spec)
	<-c.Settled()
	if init := c.Init(); init.stateless() || init.ProtocolVersion != protocol.Revision2025 {
		t.Fatalf("Init: protocol %q, stateless %v", init.ProtocolVersion, init.stateless())
	}
	callJSON(t, ctxFor(t), c, "tools/call", `{"name":"test_simple_text","arguments":{},"_meta":{"progressToken":1,"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`)
	msgs := h.wireIn("conf")
	methods := wireMethods(msgs)
	if len(methods) < 2 || methods[0] != "initialize" || methods[1] != "notifications/initialized" || slices.Contains(methods, protocol.MethodDiscover) {
		t.Errorf("wire %v: want initialize first and no %s", methods, protocol.MethodDiscover)
	}
	if m, _ := lastCall(msgs, "tools/call"); rawjson.HasReservedMeta(m.Params) || rawjson.MetaValue(m.Params, "progressToken") == nil {
		t.Errorf("tools/call at 2025-11-25: %s", m.Params)
	}
}

func TestAutoFallsBackToInitialize(t *testing.T) {
	index := everythingIndex(t)
	h := newHarness(t)
	host := h.host(nil)
	c := startReady(t, h, host, h.teeSpec("rev2025", "node", index, "stdio"))
	if init := c.Init(); init.stateless() || init.ProtocolVersion != protocol.Revision2025 {
		t.Fatalf("Init: protocol %q, stateless %v", init.ProtocolVersion, init.stateless())
	}
	methods := wireMethods(h.wireIn("rev2025"))
	if len(methods) < 3 || methods[0] != protocol.MethodDiscover || methods[1] != "initialize" || methods[2] != "notifications/initialized" {
		t.Errorf("wire %v: want server/discover, then initialize", methods)
	}
	if _, err := callTool(ctxFor(t), c, "echo", map[string]any{"message": "hi"}); err != nil {
		t.Errorf("echo: %v", err)
	}
}

func TestStatelessRestartDiscoversAgain(t *testing.T) {
	bin := conformanceServer(t)
	h := newHarness(t)
	host := h.host(&Options{Restart: RestartPolicy{MaxAttempts: 2, Backoff: time.Millisecond, MaxBackoff: time.Millisecond, Stable: time.Minute}})
	c := startReady(t, h, host, h.teeSpec("conf", bin))
	pidFile := filepath.Join(h.dir, "conf.pid")
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(pidFile); err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	// The recorder dies; the server behind it sees its stdin end.
	if err := killPid(pid); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, "the restart", func() bool {
		state, _ := c.State()
		_, err := os.Stat(pidFile)
		return c.Status().Restarts == 1 && state == StateReady && err == nil
	})
	if !c.Init().stateless() {
		t.Errorf("after the restart: protocol %q", c.Init().ProtocolVersion)
	}
	var discovers int
	for _, m := range h.wireIn("conf") {
		if m.Method == protocol.MethodDiscover {
			discovers++
		}
		if m.Method == "initialize" {
			t.Errorf("initialize sent to a stateless server")
		}
	}
	if discovers != 2 {
		t.Errorf("%d server/discover, want one per connection (2)", discovers)
	}
	callJSON(t, ctxFor(t), c, "tools/call", `{"name":"test_simple_text","arguments":{}}`)
}

func TestStatelessListChanged(t *testing.T) {
	bin := conformanceServer(t)
	h := newHarness(t)
	host := h.host(nil)
	c := startReady(t, h, host, h.teeSpec("conf", bin))
	<-c.Settled()
	const transient = "__transient_tool_for_list_changed"
	has := func() bool {
		return slices.ContainsFunc(c.Catalog().Tools, func(it Item) bool { return it.Key == transient })
	}
	if has() {
		t.Fatalf("%s listed before the change", transient)
	}
	// The list listen is acknowledged before the server sends on it: wait
	// for it on the wire, then for the server to have answered it (the
	// call below is answered after the acknowledgement on the same pipe).
	pollUntil(t, "the list listen", func() bool { return slices.Contains(wireMethods(h.wireIn("conf")), protocol.MethodListen) })
	callJSON(t, ctxFor(t), c, "tools/list", `{}`)
	if r := c.Catalog().Relisted; r != [4]uint64{} {
		t.Errorf("Relisted = %v after discovery alone, want zeros: only a server's list_changed counts", r)
	}
	callJSON(t, ctxFor(t), c, "tools/call", `{"name":"test_trigger_tool_change","arguments":{}}`)
	pollUntil(t, "the catalog to list "+transient, has)

	// Registering the same tool again leaves the list as it was, and the
	// server still says it changed: that counts, for the hosts it owes.
	before := c.Catalog()
	callJSON(t, ctxFor(t), c, "tools/call", `{"name":"test_trigger_tool_change","arguments":{}}`)
	pollUntil(t, "the unchanged list's relist to count", func() bool {
		return c.Catalog().Relisted[0] > before.Relisted[0]
	})
	if d := diffItems(c.Catalog().Tools, before.Tools); d != "" {
		t.Errorf("the tools changed on registering one again: %s", d)
	}
}

func TestStatelessResourceSubscription(t *testing.T) {
	bin := conformanceServer(t)
	h := newHarness(t)
	host := h.host(nil)
	c := startReady(t, h, host, h.teeSpec("conf", bin))
	ctx := ctxFor(t)
	const uri = "test://watched-resource"
	if res := callJSON(t, ctx, c, "resources/subscribe", `{"uri":"`+uri+`"}`); string(res) != `{}` {
		t.Errorf("resources/subscribe: %s", res)
	}
	var listen wireIn
	for _, m := range h.wireIn("conf") {
		if m.Method == protocol.MethodListen && strings.Contains(string(m.Params), uri) {
			listen = m
		}
		if m.Method == "resources/subscribe" {
			t.Errorf("resources/subscribe sent to a stateless server")
		}
	}
	var p struct {
		Notifications listenFilter `json:"notifications"`
	}
	if err := json.Unmarshal(listen.Params, &p); err != nil || !slices.Equal(p.Notifications.URIs, []string{uri}) || p.Notifications.Tools {
		t.Fatalf("the subscription's listen: %s (%v)", listen.Params, err)
	}
	updated := func() bool {
		return slices.ContainsFunc(h.rec.notifications(), func(n noteEvent) bool {
			return n.method == "notifications/resources/updated" && strings.Contains(string(n.params), uri)
		})
	}
	pollUntil(t, "notifications/resources/updated", updated)

	if res := callJSON(t, ctx, c, "resources/unsubscribe", `{"uri":"`+uri+`"}`); string(res) != `{}` {
		t.Errorf("resources/unsubscribe: %s", res)
	}
	pollUntil(t, "the listen to be cancelled", func() bool {
		for _, m := range h.wireIn("conf") {
			if m.Method == "notifications/cancelled" && strings.Contains(string(m.Params), string(listen.ID)) {
				return true
			}
		}
		return false
	})
}

// TestPreferHost2025: with a 2025 host, a server that offers both
// revisions is spoken to at 2025-11-25 (initialize, no discover), one
// pinned to the stateless revision still at 2026-07-28.
func TestPreferHost2025(t *testing.T) {
	bin := conformanceServer(t)
	h := newHarness(t)
	host := h.host(&Options{Prefer2025: true})
	c := startReady(t, h, host, h.teeSpec("both", bin))
	if init := c.Init(); init.stateless() || init.ProtocolVersion != protocol.Revision2025 {
		t.Fatalf("auto with a 2025 host: protocol %q, stateless %v", init.ProtocolVersion, init.stateless())
	}
	methods := wireMethods(h.wireIn("both"))
	if len(methods) < 2 || methods[0] != "initialize" || methods[1] != "notifications/initialized" || slices.Contains(methods, protocol.MethodDiscover) {
		t.Errorf("wire %v: want initialize and no server/discover", methods)
	}
	only := h.teeSpec("only", bin)
	only.ProtocolVersion = protocol.Stateless
	c = startReady(t, h, h.host(&Options{Prefer2025: true}), only)
	if init := c.Init(); !init.stateless() {
		t.Errorf("pinned to %s with a 2025 host: protocol %q", protocol.Stateless, init.ProtocolVersion)
	}
}
