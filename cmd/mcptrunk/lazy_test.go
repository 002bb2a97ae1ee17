package main

// Lazy servers end to end: the catalog the host sees from the cache is the
// live one byte for byte, a sleeping server has no process, its first call
// starts it (with progress to the host), a cached name the live server no
// longer has gets an error naming it and the host a list_changed, check
// shows sleeping servers and --refresh rewrites the cache, a reload of a
// lazy server's spec fills its cache again, and nothing is left running.

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// lazyTrunkCmd is `mcptrunk args...` with its own catalog cache.
func lazyTrunkCmd(tag, cache string, args ...string) *exec.Cmd {
	cmd := trunkCmd(tag, args...)
	cmd.Env = append(cmd.Env, "XDG_CACHE_HOME="+cache)
	return cmd
}

// startLazyTrunk serves cfg with the cache in cache, handshake done.
func startLazyTrunk(t *testing.T, ctx context.Context, cfg, cache string) *rawConn {
	t.Helper()
	c := startRaw(t, "mcptrunk", lazyTrunkCmd(newTag(t), cache, "serve", "--config", cfg))
	c.initialize(ctx)
	return c
}

func notesProcs(tag string) []procInfo { return procsOf(tag, notesBin) }

// rawStatus reads the trunk's status tool: each server's status.
func rawStatus(t *testing.T, ctx context.Context, c *rawConn) map[string]map[string]any {
	t.Helper()
	res := c.result(ctx, "tools/call", map[string]any{"name": "mcp__trunk__status", "arguments": map[string]any{}})
	var r struct {
		StructuredContent struct {
			Servers []map[string]any `json:"servers"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, s := range r.StructuredContent.Servers {
		out[s["server"].(string)] = s
	}
	return out
}

func allLists(t *testing.T, ctx context.Context, c *rawConn) [][]json.RawMessage {
	t.Helper()
	return [][]json.RawMessage{
		c.list(ctx, "tools/list", "tools"),
		c.list(ctx, "prompts/list", "prompts"),
		c.list(ctx, "resources/list", "resources"),
		c.list(ctx, "resources/templates/list", "resourceTemplates"),
	}
}

func sameLists(a, b [][]json.RawMessage) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for j := range a[i] {
			if !bytes.Equal(a[i][j], b[i][j]) {
				return false
			}
		}
	}
	return true
}

func TestLazyServe(t *testing.T) {
	needProc(t)
	t.Parallel()
	ctx := testCtx(t, 90*time.Second)
	cache := t.TempDir()
	cfg := writeConfig(t, map[string]server{"notes": notesServer(), "weather": weatherServer()}, map[string]any{"lazy": true})

	// No cache yet: each server starts once to fill it, and then sleeps.
	c := startLazyTrunk(t, ctx, cfg, cache)
	live := allLists(t, ctx, c)
	if !waitFor(ctx, 20*time.Second, func() bool { return len(notesProcs(c.tag)) == 0 }) {
		t.Fatal("the notes server is still running after filling its cache")
	}
	if !waitFor(ctx, 10*time.Second, func() bool {
		st := rawStatus(t, ctx, c)
		return st["notes"]["state"] == "sleeping" && st["weather"]["state"] == "sleeping"
	}) {
		t.Fatalf("status after the fill: %v", rawStatus(t, ctx, c))
	}
	if !sameLists(live, allLists(t, ctx, c)) {
		t.Error("the lists changed when the servers went to sleep")
	}
	c.shutdown(15 * time.Second)
	assertNoProcesses(t, c.tag, 5*time.Second)
	files, _ := filepath.Glob(filepath.Join(cache, "mcptrunk", "*.json"))
	if len(files) != 2 {
		t.Fatalf("cache files %v, want one per server", files)
	}

	// A warm cache: listed at once, byte for byte what the live servers
	// gave, with no process started.
	c = startLazyTrunk(t, ctx, cfg, cache)
	began := time.Now()
	cached := allLists(t, ctx, c)
	if d := time.Since(began); d > 5*time.Second {
		t.Errorf("listing from the cache took %v", d)
	}
	if !sameLists(live, cached) {
		t.Errorf("the catalog from the cache differs from the live one:\nlive   %s\ncached %s", live[0], cached[0])
	}
	if p := notesProcs(c.tag); len(p) != 0 {
		t.Fatalf("a sleeping server runs: %v", p)
	}
	st := rawStatus(t, ctx, c)["notes"]
	if st["state"] != "sleeping" || st["cachedAt"] == nil || st["lazy"] != true {
		t.Errorf("status of the sleeping server: %v", st)
	}

	// The first call starts it, telling the host while it does.
	res := c.call(ctx, "tools/call", map[string]any{"name": "mcp__notes__echo", "arguments": map[string]any{"text": "wake up"},
		"_meta": map[string]any{"progressToken": "tok-1"}})
	if res.Err != nil || !strings.Contains(string(res.Result), "wake up") {
		t.Fatalf("first call: %s %v", res.Result, res.Err)
	}
	var sawProgress bool
	for _, n := range rawNotes(c, "notifications/progress") {
		sawProgress = sawProgress || (strings.Contains(string(n), `"tok-1"`) && strings.Contains(string(n), `starting server \"notes\"`))
	}
	if !sawProgress {
		t.Error("no progress from the trunk while the server started")
	}
	if p := notesProcs(c.tag); len(p) != 1 {
		t.Errorf("after the first call: notes processes %v, want one", p)
	}
	if st := rawStatus(t, ctx, c)["notes"]; st["state"] != "ready" || st["lastUse"] == nil {
		t.Errorf("status after the call: %v", st)
	}
	if !sameLists(live, allLists(t, ctx, c)) {
		t.Error("the lists changed with the wake")
	}
	c.shutdown(15 * time.Second)
	assertNoProcesses(t, c.tag, 5*time.Second)
}

// A cached name the live server no longer has: the call gets an error
// naming it, the cache is replaced, and the host is told the list changed.
func TestLazyStaleCachedTool(t *testing.T) {
	needProc(t)
	t.Parallel()
	ctx := testCtx(t, 90*time.Second)
	cache := t.TempDir()
	cfg := writeConfig(t, map[string]server{"notes": notesServer()}, map[string]any{"lazy": true})
	c := startLazyTrunk(t, ctx, cfg, cache)
	c.list(ctx, "tools/list", "tools")
	if !waitFor(ctx, 20*time.Second, func() bool { return len(notesProcs(c.tag)) == 0 }) {
		t.Fatal("the notes server is still running after filling its cache")
	}
	c.shutdown(15 * time.Second)

	// The cache claims a tool the server does not have.
	files, _ := filepath.Glob(filepath.Join(cache, "mcptrunk", "notes.*.json"))
	if len(files) != 1 {
		t.Fatalf("cache files %v", files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.Replace(data, []byte(`"tools":[`), []byte(`"tools":[{"name":"ghost","inputSchema":{"type":"object"}},`), 1)
	if err := os.WriteFile(files[0], data, 0o600); err != nil {
		t.Fatal(err)
	}

	c = startLazyTrunk(t, ctx, cfg, cache)
	if names := keysOf(t, c.list(ctx, "tools/list", "tools"), "name"); !contains(names, "mcp__notes__ghost") {
		t.Fatalf("the cached ghost tool is not listed: %v", names)
	}
	res := c.call(ctx, "tools/call", map[string]any{"name": "mcp__notes__ghost", "arguments": map[string]any{}})
	if res.Err == nil || !strings.Contains(res.Err.Message, `"mcp__notes__ghost"`) || !strings.Contains(res.Err.Message, "no longer offers it") {
		t.Fatalf("call of a tool gone from the live server: %s %v", res.Result, res.Err)
	}
	if !waitFor(ctx, 10*time.Second, func() bool { return len(rawNotes(c, "notifications/tools/list_changed")) > 0 }) {
		t.Error("no tools/list_changed after the live catalog replaced the cached one")
	}
	if names := keysOf(t, c.list(ctx, "tools/list", "tools"), "name"); contains(names, "mcp__notes__ghost") {
		t.Error("the ghost tool is still listed")
	}
	if !waitFor(ctx, 10*time.Second, func() bool {
		data, _ := os.ReadFile(files[0])
		return len(data) > 0 && !bytes.Contains(data, []byte("ghost"))
	}) {
		t.Error("the cache still has the ghost tool")
	}
	c.shutdown(15 * time.Second)
	assertNoProcesses(t, c.tag, 5*time.Second)
}

// check shows a cached lazy server as sleeping without starting it;
// --refresh starts it and rewrites its cache.
func TestLazyCheck(t *testing.T) {
	needProc(t)
	t.Parallel()
	cache := t.TempDir()
	cfg := writeConfig(t, map[string]server{"notes": notesServer()}, map[string]any{"lazy": true})
	run := func(args ...string) string {
		t.Helper()
		tag := newTag(t)
		cmd := lazyTrunkCmd(tag, cache, append([]string{"check", "--config", cfg}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("check %v: %v\n%s", args, err, out)
		}
		assertNoProcesses(t, tag, 5*time.Second)
		return string(out)
	}
	run() // fills the cache
	files, _ := filepath.Glob(filepath.Join(cache, "mcptrunk", "notes.*.json"))
	if len(files) != 1 {
		t.Fatalf("cache files %v", files)
	}
	out := run()
	if !strings.Contains(out, "sleeping (lazy: listed from its catalog cache of") || !containsAll(out, "CATALOG", "USED", "cached ") {
		t.Errorf("check with a warm cache:\n%s", out)
	}
	before, _ := os.Stat(files[0])
	out = run("--refresh")
	if !strings.Contains(out, "notes") || strings.Contains(out, "sleeping (lazy") {
		t.Errorf("check --refresh did not start the server:\n%s", out)
	}
	after, err := os.Stat(files[0])
	if err != nil || !after.ModTime().After(before.ModTime()) {
		t.Errorf("check --refresh did not rewrite the cache (%v -> %v, %v)", before.ModTime(), after.ModTime(), err)
	}
}

// A reload that changes a lazy server's spec replaces it: the new spec has
// no cache, so it is started once to fill one, and sleeps again.
func TestLazyReload(t *testing.T) {
	needProc(t)
	t.Parallel()
	ctx := testCtx(t, 90*time.Second)
	cache := t.TempDir()
	dir := t.TempDir()
	path := filepath.Join(dir, "mcptrunk.json")
	write := func(args ...string) {
		t.Helper()
		data, _ := json.Marshal(map[string]any{"mcpServers": map[string]server{"notes": notesServer(args...)}, "trunk": map[string]any{"lazy": true}})
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	write()
	c := startLazyTrunk(t, ctx, path, cache)
	c.list(ctx, "tools/list", "tools")
	if !waitFor(ctx, 20*time.Second, func() bool {
		return len(notesProcs(c.tag)) == 0 && rawStatus(t, ctx, c)["notes"]["state"] == "sleeping"
	}) {
		t.Fatal("the notes server did not go to sleep")
	}
	write("-tools", "2")
	if err := c.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	if !waitFor(ctx, 20*time.Second, func() bool {
		return contains(keysOf(t, c.list(ctx, "tools/list", "tools"), "name"), "mcp__notes__extra_001")
	}) {
		t.Fatal("the reloaded spec's tools never appeared")
	}
	if !waitFor(ctx, 20*time.Second, func() bool {
		return len(notesProcs(c.tag)) == 0 && rawStatus(t, ctx, c)["notes"]["state"] == "sleeping"
	}) {
		t.Fatal("the reloaded server did not go back to sleep")
	}
	if files, _ := filepath.Glob(filepath.Join(cache, "mcptrunk", "notes.*.json")); len(files) != 1 {
		t.Errorf("cache files %v, want the new spec's alone", files)
	}
	res := c.call(ctx, "tools/call", map[string]any{"name": "mcp__notes__extra_001", "arguments": map[string]any{}})
	if res.Err != nil {
		t.Fatalf("call after the reload: %v", res.Err)
	}
	c.shutdown(15 * time.Second)
	assertNoProcesses(t, c.tag, 5*time.Second)
}
