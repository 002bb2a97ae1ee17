package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptrunk/mcptrunk/internal/accesstoken/testissuer"
)

// codeProgram searches the notes and gets three cities' forecasts at
// once; a refused notes call is caught, and its message returned.
const codeProgram = `
let notes;
try {
  notes = (await call("mcp__notes__search", {query: "e"})).structuredContent.matches.length;
} catch (e) {
  notes = "refused: " + e.message;
}
const cities = ["Oslo", "Lisbon", "Tokyo"];
const forecasts = await Promise.all(cities.map(city => tools.weather.forecast({city, days: 1})));
return {notes, forecasts: forecasts.map(f => f.content[0].text.split("\n")[0])};`

// runReport is run_code's structured result.
type runReport struct {
	Run    string          `json:"run"`
	Result json.RawMessage `json:"result"`
	Error  string          `json:"error"`
	Calls  int             `json:"calls"`
}

// Code mode end to end, under the team example's rules widened so that
// support may use the trunk's own tools (allowed, and not denied as
// destructive): admin's program searches the
// notes and gets three forecasts at once, and only the program's small
// result comes back; support's same program has the notes call refused
// inside it, with the message a direct call gets, and the forecasts
// through. The audit log has each inner call with its caller and the
// run's id. A program that never ends stops at the time budget, one that
// allocates without end at the memory budget, and the trunk serves on.
func TestCodeModeRunsTheCallersCalls(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 2*time.Minute)
	iss := testissuer.New(t)
	const resource = "http://trunk.test/mcp"
	cfg := writeConfig(t, map[string]server{"notes": notesServer(), "weather": weatherServer()}, waitingForAll(map[string]any{
		"http":     map[string]any{"auth": map[string]any{"issuer": iss.URL, "resource": resource, "scopes": []string{"mcp"}}},
		"audit":    map[string]any{"file": "audit.jsonl"},
		"codeMode": map[string]any{"enabled": true, "wallTime": "3s", "maxMemoryBytes": 64 << 20},
		"policy": map[string]any{"rules": []map[string]string{
			{"allow": `"admin" in claims.?groups.orValue([])`},
			{"allow": `"support" in claims.?groups.orValue([]) && server in ["weather", "trunk"]`},
			// run_code has no annotations, so MCP's defaults call it
			// destructive: the trunk's own tools are let through, and
			// each call a program makes is decided on its own.
			{"deny": `annotations.destructiveHint && server != "trunk" && !("admin" in claims.?groups.orValue([]))`},
		}},
	}))
	trunk := startHTTPTrunk(t, ctx, cfg)
	admin := teamClient(t, ctx, trunk.url, iss.Token(t, "ada", resource, groupClaims("admin")))
	support := teamClient(t, ctx, trunk.url, iss.Token(t, "sam", resource, groupClaims("support")))

	run := func(cs *mcp.ClientSession, code string) (runReport, *mcp.CallToolResult) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__trunk__run_code", Arguments: map[string]any{"code": code}})
		if err != nil {
			t.Fatalf("run_code: %v", err)
		}
		var r runReport
		if err := json.Unmarshal([]byte(toolText(res)), &r); err != nil {
			t.Fatalf("run_code's text %q: %v", toolText(res), err)
		}
		return r, res
	}

	adminRun, res := run(admin, codeProgram)
	var got struct {
		Notes     any      `json:"notes"`
		Forecasts []string `json:"forecasts"`
	}
	if err := json.Unmarshal(adminRun.Result, &got); err != nil || res.IsError {
		t.Fatalf("admin's run: %s", toolText(res))
	}
	if n, ok := got.Notes.(float64); !ok || n < 1 || len(got.Forecasts) != 3 || !strings.Contains(got.Forecasts[2], "Tokyo") || adminRun.Calls != 4 {
		t.Errorf("admin's run: %s", toolText(res))
	}
	if len(toolText(res)) > 1024 {
		t.Errorf("admin's run returned %d bytes, want only the program's small result", len(toolText(res)))
	}

	_, direct := support.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__notes__search", Arguments: map[string]any{"query": "e"}})
	supportRun, res := run(support, codeProgram)
	if err := json.Unmarshal(supportRun.Result, &got); err != nil || res.IsError {
		t.Fatalf("support's run: %s", toolText(res))
	}
	msg, _ := got.Notes.(string)
	if direct == nil || !strings.HasPrefix(msg, "refused: ") || !strings.Contains(direct.Error(), strings.TrimPrefix(msg, "refused: ")) || len(got.Forecasts) != 3 {
		t.Errorf("support's run: %s; a direct call: %v", toolText(res), direct)
	}

	// Each inner call is audited as its caller's, with the run's id.
	path := filepath.Join(filepath.Dir(cfg), "audit.jsonl")
	want := map[string]int{"ada mcp__notes__search": 1, "ada mcp__weather__forecast": 3, "sam mcp__notes__search": 1, "sam mcp__weather__forecast": 3}
	var seen map[string]int
	if !waitFor(ctx, 20*time.Second, func() bool {
		seen = map[string]int{}
		for _, l := range auditLines(t, path) {
			if l["run"] == adminRun.Run && l["subject"] == "ada" || l["run"] == supportRun.Run && l["subject"] == "sam" {
				seen[l["subject"].(string)+" "+l["item"].(string)]++
			}
		}
		return len(seen) == len(want)
	}) {
		t.Errorf("audit lines of the runs' calls: %v, want %v", seen, want)
	}
	for k, n := range want {
		if seen[k] != n {
			t.Errorf("audit lines of %s in its run: %d, want %d", k, seen[k], n)
		}
	}

	// A program that never ends stops at the time budget; the trunk serves on.
	r, res := run(admin, `while (true) {}`)
	if !res.IsError || !strings.Contains(r.Error, "wallTime") {
		t.Errorf("an endless program: %s", toolText(res))
	}
	if r, res := run(admin, `return "x".repeat(1e9).length;`); !res.IsError || !strings.Contains(r.Error, "maxMemoryBytes (67108864)") {
		t.Errorf("a program past its memory: %s", toolText(res))
	}
	if r, res := run(admin, `return typeof process + " " + typeof require + " " + typeof fetch;`); string(r.Result) != `"undefined undefined undefined"` {
		t.Errorf("what a program can reach: %s", toolText(res))
	}
	if text := callText(t, ctx, admin, "mcp__weather__forecast", map[string]any{"city": "Oslo"}); !strings.Contains(text, "Oslo") {
		t.Errorf("a call after the endless program: %s", text)
	}
}

// figuresProgram is the task of TestCodeModeFigures as one program: the
// notes that mention the weather, and which of three cities is warmest
// over the next week.
const figuresProgram = `const [notes, ...fc] = await Promise.all([
  call("mcp__notes__search", {query: "weather"}),
  ...["Oslo", "Lisbon", "Tokyo"].map(city => tools.weather.forecast({city, days: 7}))]);
const highs = fc.map(f => Math.max(...[...f.content[0].text.matchAll(/high (-?\d+)/g)].map(m => +m[1])));
const i = highs.indexOf(Math.max(...highs));
return {notes: notes.structuredContent.matches.map(m => m.title), warmest: ["Oslo", "Lisbon", "Tokyo"][i], high: highs[i]};`

// The figures of docs/context.md's code-mode section: one task done by
// four direct calls and by one program, measured as the bytes of the
// results that reach the host (the model's context) and the trunk's wall
// time. It checks that the program's answer is the smaller and agrees
// with the direct calls, and logs the table.
func TestCodeModeFigures(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 2*time.Minute)
	c := startRawTrunkEnv(t, ctx, writeConfig(t, map[string]server{"notes": notesServer(), "weather": weatherServer()},
		waitingForAll(map[string]any{"codeMode": map[string]any{"enabled": true}})))
	settledTools(t, ctx, c, 1)
	written := 0 // bytes of the calls' params: what the model writes
	call := func(name string, args map[string]any) json.RawMessage {
		params := map[string]any{"name": name, "arguments": args}
		b, _ := json.Marshal(params)
		written += len(b)
		return c.result(ctx, "tools/call", params)
	}

	start := time.Now()
	direct := []json.RawMessage{call("mcp__notes__search", map[string]any{"query": "weather"})}
	for _, city := range []string{"Oslo", "Lisbon", "Tokyo"} {
		direct = append(direct, call("mcp__weather__forecast", map[string]any{"city": city, "days": 7}))
	}
	directTime, directWritten := time.Since(start), written
	written = 0
	directBytes := 0
	for _, r := range direct {
		directBytes += len(r)
	}

	start = time.Now()
	program := call("mcp__trunk__run_code", map[string]any{"code": figuresProgram})
	programTime, programWritten := time.Since(start), written
	api := call("mcp__trunk__code_api", map[string]any{})

	var res struct {
		StructuredContent runReport `json:"structuredContent"`
		IsError           bool      `json:"isError"`
	}
	if err := json.Unmarshal(program, &res); err != nil || res.IsError || !strings.Contains(string(res.StructuredContent.Result), `"warmest":`) {
		t.Fatalf("the program: %s", program)
	}
	var answer struct{ Warmest string }
	_ = json.Unmarshal(res.StructuredContent.Result, &answer)
	if !strings.Contains(string(direct[1])+string(direct[2])+string(direct[3]), "Forecast for "+answer.Warmest) || len(program) >= directBytes {
		t.Errorf("the program's answer %s (%d bytes) against the direct calls' %d bytes", res.StructuredContent.Result, len(program), directBytes)
	}
	tokens := func(b int) int { return (b + 3) / 4 }
	t.Logf("\n| done by | tool calls the model makes | bytes of results (≈ tokens) | bytes of the calls the model writes (≈ tokens) | trunk wall time |\n|---|---:|---:|---:|---:|\n"+
		"| direct calls | 4 | %d (%d) | %d (%d) | %v |\n| one program | 1 | %d (%d) | %d (%d) | %v |\n| code_api, once | 1 | %d (%d) | | |",
		directBytes, tokens(directBytes), directWritten, tokens(directWritten), directTime.Round(time.Millisecond),
		len(program), tokens(len(program)), programWritten, tokens(programWritten), programTime.Round(time.Millisecond),
		len(api), tokens(len(api)))
}
