package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var budgets = Budgets{WallTime: 10 * time.Second, MaxCalls: 20, MaxInFlight: 4, MaxResultBytes: 1 << 10, MaxLogBytes: 1 << 10}

// echo answers every call with a result naming the tool and its arguments.
func echo(_ context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	if args == nil {
		args = json.RawMessage(`null`)
	}
	return json.RawMessage(fmt.Sprintf(`{"content":[{"type":"text","text":"ok"}],"structuredContent":{"tool":%q,"args":%s}}`, name, args)), nil
}

func runCode(t *testing.T, code string, o Options) (Result, error) {
	t.Helper()
	if o.Call == nil {
		o.Call = echo
	}
	if o.Budgets == (Budgets{}) {
		o.Budgets = budgets
	}
	return Run(t.Context(), code, o)
}

// What the program returns is the result, as JSON; console.log's lines
// are collected; call and the typed functions reach the call function
// with the exported name and the arguments.
func TestRunResultLogsAndCalls(t *testing.T) {
	res, err := runCode(t, `
		console.log("start", {n: 1});
		const a = await call("mcp__notes__search", {query: "q"});
		const b = await tools.weather.forecast({city: "Oslo"});
		return {a: a.structuredContent, b: b.structuredContent.args.city, text: b.content[0].text};`,
		Options{Tools: map[string]map[string]string{"weather": {"forecast": "mcp__weather__forecast"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"a":{"tool":"mcp__notes__search","args":{"query":"q"}},"b":"Oslo","text":"ok"}`
	if string(res.Value) != want || res.Calls != 2 {
		t.Errorf("result %s (%d calls), want %s (2 calls)", res.Value, res.Calls, want)
	}
	if len(res.Logs) != 1 || res.Logs[0] != `start {"n":1}` {
		t.Errorf("logs %q", res.Logs)
	}
	if res, err := runCode(t, `const x = 1;`, Options{}); err != nil || string(res.Value) != "null" {
		t.Errorf("a program returning nothing: %s, %v; want null", res.Value, err)
	}
}

// A refused call is an exception the program can catch, with the
// caller's message; uncaught, it ends the run with that message.
func TestRunRefusalIsCatchable(t *testing.T) {
	refuse := func(_ context.Context, name string, _ json.RawMessage) (json.RawMessage, error) {
		if name == "mcp__notes__search" {
			return nil, errors.New(`unknown tool "mcp__notes__search"`)
		}
		return echo(context.Background(), name, nil)
	}
	res, err := runCode(t, `
		let refused;
		try { await call("mcp__notes__search", {}); } catch (e) { refused = e.message; }
		const w = await call("mcp__weather__forecast");
		return {refused, through: w.structuredContent.tool};`, Options{Call: refuse})
	want := `{"refused":"unknown tool \"mcp__notes__search\"","through":"mcp__weather__forecast"}`
	if err != nil || string(res.Value) != want {
		t.Errorf("got %s, %v; want %s", res.Value, err, want)
	}
	_, err = runCode(t, `await call("mcp__notes__search", {});`, Options{Call: refuse})
	if err == nil || !strings.Contains(err.Error(), `unknown tool "mcp__notes__search"`) {
		t.Errorf("an uncaught refusal: %v", err)
	}
}

// Promise.all runs calls concurrently, never more than MaxInFlight at once.
// Each call waits until as many as the cap are in flight (or all have
// come): without concurrency the run would stall, without the cap more
// would be in flight.
func TestRunConcurrencyCap(t *testing.T) {
	const total, limit = 7, 3
	var mu sync.Mutex
	cond := sync.NewCond(&mu)
	inFlight, entered, most := 0, 0, 0
	call := func(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
		mu.Lock()
		inFlight++
		entered++
		most = max(most, inFlight)
		cond.Broadcast()
		for inFlight < limit && entered < total && ctx.Err() == nil {
			cond.Wait()
		}
		inFlight--
		mu.Unlock()
		return echo(ctx, name, args)
	}
	b := budgets
	b.MaxInFlight = limit
	res, err := runCode(t, fmt.Sprintf(`
		const rs = await Promise.all(Array.from({length: %d}, (_, i) => call("mcp__t__x", {i})));
		return rs.map(r => r.structuredContent.args.i);`, total), Options{Call: call, Budgets: b})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Value) != `[0,1,2,3,4,5,6]` {
		t.Errorf("results %s", res.Value)
	}
	if most != limit {
		t.Errorf("at most %d calls were in flight at once, want %d", most, limit)
	}
}

// Each budget ends the run with a *BudgetError naming it.
func TestRunBudgets(t *testing.T) {
	small := Budgets{WallTime: 200 * time.Millisecond, MaxCalls: 3, MaxInFlight: 2, MaxResultBytes: 20, MaxLogBytes: 20}
	for _, tc := range []struct {
		name, code, budget string
		calls              int
	}{
		{"endless loop", `while (true) {}`, "wallTime", 0},
		{"endless loop after a call", `await call("mcp__t__x"); for (;;) {}`, "wallTime", 1},
		{"too many calls", `for (let i = 0; i < 10; i++) { await call("mcp__t__x"); }`, "maxCalls", 3},
		{"too many calls at once", `await Promise.all([1,2,3,4,5].map(() => call("mcp__t__x")));`, "maxCalls", 3},
		{"a caught budget is still the end", `for (let i = 0; i < 10; i++) { try { await call("mcp__t__x"); } catch (e) {} }`, "maxCalls", 3},
		{"too large a result", `return "x".repeat(100);`, "maxResultBytes", 0},
		{"too much log", `for (let i = 0; i < 100; i++) console.log("line", i);`, "maxLogBytes", 0},
	} {
		res, err := runCode(t, tc.code, Options{Budgets: small})
		be, ok := errors.AsType[*BudgetError](err)
		if !ok || be.Budget != tc.budget {
			t.Errorf("%s: error %v, want the budget %s", tc.name, err, tc.budget)
			continue
		}
		if !strings.Contains(err.Error(), tc.budget) || res.Calls != tc.calls {
			t.Errorf("%s: %q after %d calls, want it to name %s after %d", tc.name, err, res.Calls, tc.budget, tc.calls)
		}
	}
}

// The program has ECMAScript and what this package gives it, nothing of
// the process: no modules, files, network, timers or process.
func TestRunHasNoAccess(t *testing.T) {
	res, err := runCode(t, `return ["require", "process", "fetch", "XMLHttpRequest", "setTimeout", "setInterval", "Deno", "Bun", "module", "exports"].filter(n => typeof globalThis[n] !== "undefined");`, Options{})
	if err != nil || string(res.Value) != `[]` {
		t.Errorf("globals beyond ECMAScript: %s, %v", res.Value, err)
	}
	for code, want := range map[string]string{
		`require("fs").readFileSync("/etc/passwd")`: "ReferenceError: require is not defined",
		`return process.env`:                        "ReferenceError: process is not defined",
		`await fetch("http://example.com")`:         "ReferenceError: fetch is not defined",
		`setTimeout(() => {}, 10)`:                  "ReferenceError: setTimeout is not defined",
		`return (`:                                  "compiling the program",
		`await new Promise(() => {})`:               "never settles",
		`throw new TypeError("bad")`:                "the program threw TypeError: bad",
		`function f() { return f() + 1; } f();`:     "call stack went over 2000 frames",
		`call(42)`:                                  "name must be a tool's name",
		`call("mcp__t__x", [1])`:                    "args must be an object",
	} {
		_, err := runCode(t, code, Options{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one containing %q", code, err, want)
		}
	}
}

// Cancelling the run's context cancels its calls in flight, and the run
// ends with the cancellation.
func TestRunCancelEndsCalls(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	saw := make(chan error, 1)
	call := func(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, error) {
		cancel() // the host cancels while the call is in flight
		<-ctx.Done()
		saw <- ctx.Err()
		return nil, ctx.Err()
	}
	_, err := Run(ctx, `await call("mcp__t__x");`, Options{Call: call, Budgets: budgets})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("run: %v, want context.Canceled", err)
	}
	if got := <-saw; !errors.Is(got, context.Canceled) {
		t.Errorf("the call saw %v, want context.Canceled", got)
	}
}

// Calls beyond MaxInFlight wait for a slot: with every call held until the
// run ends (here at its time budget), exactly MaxInFlight of them reached
// the call function.
func TestRunInFlightWaitTheirTurn(t *testing.T) {
	const limit = 3
	var mu sync.Mutex
	entered := 0
	call := func(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, error) {
		mu.Lock()
		entered++
		mu.Unlock()
		<-ctx.Done()
		return nil, ctx.Err()
	}
	b := budgets
	b.MaxInFlight, b.WallTime = limit, time.Second
	_, err := runCode(t, `await Promise.all([1,2,3,4,5,6,7].map(i => call("mcp__t__x", {i})));`, Options{Call: call, Budgets: b})
	if be, ok := errors.AsType[*BudgetError](err); !ok || be.Budget != "wallTime" {
		t.Fatalf("run: %v, want the wallTime budget", err)
	}
	if entered != limit {
		t.Errorf("%d calls reached the call function, want %d (the rest wait their turn)", entered, limit)
	}
}
