package main

// Protocol fidelity (see protocol_server_requests_test.go): list_changed
// notifications and pagination of the lists.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestProtocolListChanged: a burst of list_changed from an upstream
// (server-everything sends several right after initialized) reaches the
// host as at most a couple of list_changed, only once the host has listed,
// and the host ends with the full list; the same for tools and prompts
// changed by tool calls.
func TestProtocolListChanged(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 120*time.Second)
	argv := everythingArgv(t)
	// everything starts once the host has listed (the test creates the
	// gate file then), so that its burst comes after the first list, which
	// waits startupWait for it; the conformance server, a Go binary, is up
	// well within that on a loaded machine: arriving after the first list,
	// it would add list_changed of its own to those counted here.
	gate := filepath.Join(t.TempDir(), "gate")
	evSrv, evTap := tapped(t, append([]string{"sh", "-c", `while [ ! -e "$GATE" ]; do sleep 0.05; done; exec "$0" "$@"`}, argv...)...)
	evSrv["timeouts"] = slowTimeouts
	evSrv["env"] = map[string]string{"GATE": gate}
	cfSrv, cfTap := tapped(t, conformanceBin(t))
	cfg := writeConfig(t, map[string]server{"everything": evSrv, "conformance": cfSrv}, map[string]any{"startupWait": "5s"})
	const caps = `{"roots":{"listChanged":true},"sampling":{},"elicitation":{}}`
	c, _ := rawInit(t, ctx, cfg, "2025-11-25", caps)
	listChanged := func(list string) int { return len(rawNotes(c, "notifications/"+list+"/list_changed")) }

	first := keysOf(t, c.list(ctx, "tools/list", "tools"), "name")
	conformance := false
	for _, n := range first {
		if strings.HasPrefix(n, "mcp__everything__") {
			t.Fatalf("setup: everything was listed before it started: %q", first)
		}
		conformance = conformance || strings.HasPrefix(n, "mcp__conformance__")
	}
	if !conformance {
		t.Fatalf("setup: the conformance server was not up within startupWait, so its arrival would be counted: %q", first)
	}
	if n := listChanged("tools"); n != 0 {
		t.Errorf("%d tools/list_changed before anything changed", n)
	}
	// The host has read the resources too (but not the templates, which
	// share their list_changed).
	for _, r := range keysOf(t, c.list(ctx, "resources/list", "resources"), "uri") {
		if strings.HasPrefix(r, "mcptrunk://everything/") {
			t.Fatalf("setup: everything's resources were listed before it started")
		}
	}

	// The burst upstream.
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if !waitFor(ctx, 30*time.Second, func() bool {
		n := 0
		for _, m := range evTap.sent() {
			if m.Method == "notifications/tools/list_changed" {
				n++
			}
		}
		return n >= 3 // one per tool it registers for the capabilities: 4 here
	}) {
		var methods []string
		for _, m := range evTap.sent() {
			methods = append(methods, m.Method+" "+string(m.ID))
		}
		t.Fatalf("server-everything did not send its burst of tools/list_changed; it sent %q", methods)
	}
	// The host hears of it, then the trunk goes quiet.
	if !waitFor(ctx, 30*time.Second, func() bool { return listChanged("tools") > 0 }) {
		t.Fatal("the host never got tools/list_changed after everything arrived")
	}
	// The host ends with the full list: everything's tools as a direct
	// client with the same capabilities sees them. The host lists them only
	// once the trunk has them all (mcp__trunk__status counts them): a list
	// read in the middle of the burst would earn it one more list_changed.
	d := startRaw(t, "everything", exec.Command(argv[0], argv[1:]...))
	d.result(ctx, "initialize", `{"protocolVersion":"2025-11-25","capabilities":`+caps+`,"clientInfo":{"name":"mcptrunk-protocol-raw","version":"0"}}`)
	d.notify("notifications/initialized", nil)
	var want, got []string
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	err := eventually(wctx, 200*time.Millisecond, func() error {
		want = nil
		for _, n := range keysOf(t, d.list(ctx, "tools/list", "tools"), "name") {
			want = append(want, "mcp__everything__"+n)
		}
		sort.Strings(want)
		if !slices.Contains(want, "mcp__everything__trigger-sampling-request") {
			return fmt.Errorf("the direct client does not list trigger-sampling-request yet: %q", want)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("everything's tools, directly: %v", err)
	}
	// All it was needed for. It asks for roots 350 ms after initialized,
	// and one closed before it had them would never exit: it logs them.
	if !waitFor(ctx, 20*time.Second, func() bool { return len(rawNotes(d, "notifications/message")) > 0 }) {
		t.Fatal("everything, directly, never logged the roots it got")
	}
	d.shutdown(procGrace)
	err = eventually(wctx, 200*time.Millisecond, func() error {
		text, err := c.callTool(ctx, "mcp__trunk__status", nil)
		if err != nil {
			return err
		}
		st, err := parseStatus(text)
		if err != nil {
			return err
		}
		if n := st["everything"].Tools; n != len(want) {
			return fmt.Errorf("the trunk has %d of everything's %d tools", n, len(want))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("the trunk never had everything's tools: %v", err)
	}
	for _, n := range keysOf(t, c.list(ctx, "tools/list", "tools"), "name") {
		if strings.HasPrefix(n, "mcp__everything__") {
			got = append(got, n)
		}
	}
	if !slices.Equal(want, got) {
		t.Errorf("the host's tool list after the burst: want %q, got %q", want, got)
	}

	// The host has read the full list, so the trunk has nothing left to
	// announce; a list_changed it had already queued comes before the
	// answer to a later request.
	c.result(ctx, "ping", nil)
	if n := listChanged("tools"); n > 2 {
		t.Errorf("server-everything's arrival and burst of %d cost the host %d tools/list_changed, want at most 2", len(filterTap(evTap.sent(), "notifications/tools/list_changed")), n)
	}
	t.Logf("tools/list_changed: %d from everything, %d to the host", len(filterTap(evTap.sent(), "notifications/tools/list_changed")), listChanged("tools"))
	waitFor(ctx, 10*time.Second, func() bool { return listChanged("resources") > 0 })
	if n := listChanged("resources"); n < 1 || n > 2 {
		t.Errorf("everything's resources arrived with %d resources/list_changed, want 1 or 2", n)
	}
	if n := listChanged("prompts"); n != 0 {
		t.Errorf("the host never listed prompts but got %d prompts/list_changed", n)
	}
	var docs int
	for _, r := range keysOf(t, c.list(ctx, "resources/list", "resources"), "uri") {
		if strings.HasPrefix(r, "mcptrunk://everything/demo://resource/static/document/") {
			docs++
		}
	}
	if docs == 0 {
		t.Errorf("after resources/list_changed the host does not see everything's resources")
	}

	// Changes made by tool calls: five concurrent calls that each re-add a
	// tool (or prompt) upstream.
	for _, kind := range []struct{ list, field, tool, item string }{
		{"tools", "tools", "test_trigger_tool_change", "mcp__conformance____transient_tool_for_list_changed"},
		{"prompts", "prompts", "test_trigger_prompt_change", "mcp__conformance____transient_prompt_for_list_changed"},
	} {
		before := keysOf(t, c.list(ctx, kind.list+"/list", kind.field), "name")
		if slices.Contains(before, kind.item) {
			t.Fatalf("%s is listed before it was added", kind.item)
		}
		n0 := listChanged(kind.list)
		others0 := listChanged("tools") + listChanged("prompts") - n0
		upstream0 := len(filterTap(cfTap.sent(), "notifications/"+kind.list+"/list_changed"))
		var wg sync.WaitGroup
		for range 5 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if r, err := c.tryCall(ctx, "tools/call", `{"name":"mcp__conformance__`+kind.tool+`","arguments":{}}`); err != nil || r.Err != nil {
					t.Errorf("%s: %v %v", kind.tool, err, r.Err)
				}
			}()
		}
		wg.Wait()
		if !waitFor(ctx, 10*time.Second, func() bool { return listChanged(kind.list) > n0 }) {
			t.Errorf("no %s/list_changed after %s", kind.list, kind.tool)
		}
		if after := keysOf(t, c.list(ctx, kind.list+"/list", kind.field), "name"); !slices.Contains(after, kind.item) {
			t.Errorf("%s is not listed after %s: %q", kind.item, kind.tool, after)
		}
		c.result(ctx, "ping", nil) // as above: what was queued is in
		upstream := len(filterTap(cfTap.sent(), "notifications/"+kind.list+"/list_changed")) - upstream0
		if delta := listChanged(kind.list) - n0; delta > 2 {
			t.Errorf("%d %s/list_changed from the conformance server cost the host %d", upstream, kind.list, delta)
		}
		if others := listChanged("tools") + listChanged("prompts") - listChanged(kind.list); others != others0 {
			t.Errorf("only %s changed, but the host was told of other lists too", kind.list)
		}
	}
}

func filterTap(msgs []tapMsg, method string) []tapMsg {
	var out []tapMsg
	for _, m := range msgs {
		if m.Method == method {
			out = append(out, m)
		}
	}
	return out
}

// TestProtocolPagination: a catalog larger than a page (DefaultPageSize,
// 1000) reaches go-sdk's iterator, which follows the cursors, as the full
// sorted list. The pages themselves, as a raw client reads them, are
// tested in proxy (TestPaginationInMemory).
func TestProtocolPagination(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 90*time.Second)
	servers := map[string]server{}
	for _, n := range []string{"n1", "n2", "n3"} {
		servers[n] = notesServer("-tools", "400")
	}
	cfg := writeConfig(t, servers, nil)
	direct := startRawDirect(t, ctx, "notes", notesBin, "-tools", "400")
	var want []string
	for _, raw := range keysOf(t, direct.list(ctx, "tools/list", "tools"), "name") {
		for _, n := range []string{"n1", "n2", "n3"} {
			want = append(want, "mcp__"+n+"__"+raw)
		}
	}
	sort.Strings(want)

	h := trunkHost(t, ctx, cfg, hostConfig{}, "")
	var upstream []string
	got := toolNames(t, ctx, h.ClientSession)
	for _, n := range got {
		if !strings.HasPrefix(n, "mcp__trunk__") {
			upstream = append(upstream, n)
		}
	}
	if len(want) < 1200 || !slices.Equal(upstream, want) || !slices.IsSorted(got) {
		t.Errorf("go-sdk's iterator saw %d upstream tools (sorted: %v), want the %d the servers offer", len(upstream), slices.IsSorted(got), len(want))
	}
}
