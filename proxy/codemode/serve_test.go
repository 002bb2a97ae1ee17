package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"
)

// Every outcome of a run comes through the runner's protocol as Run gives
// it: the value, logs and calls, a program's error with its message, a
// refusal's message, and each budget as a *BudgetError.
func TestLocalCarriesEveryOutcome(t *testing.T) {
	refuse := func(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
		if name == "mcp__notes__search" {
			return nil, errors.New(`unknown tool "mcp__notes__search"`)
		}
		return echo(ctx, name, args)
	}
	small := Budgets{WallTime: 200 * time.Millisecond, MaxCalls: 3, MaxInFlight: 2, MaxResultBytes: 20, MaxLogBytes: 20}
	tools := map[string]map[string]string{"weather": {"forecast": "mcp__weather__forecast"}}
	for _, tc := range []struct {
		code string
		b    Budgets
	}{
		{`console.log("start", {n: 1}); const a = await call("mcp__t__x", {q: "q"}); const b = await tools.weather.forecast({city: "Oslo"}); return [a, b];`, budgets},
		{`const x = 1;`, budgets},
		{`let r; try { await call("mcp__notes__search", {}); } catch (e) { r = e.message; } return r;`, budgets},
		{`await call("mcp__notes__search", {});`, budgets},
		{`while (true) {}`, small},
		{`for (let i = 0; i < 10; i++) { await call("mcp__t__x"); }`, small},
		{`return "x".repeat(100);`, small},
		{`for (let i = 0; i < 100; i++) console.log("line", i);`, small},
		{`return (`, budgets},
		{`throw new TypeError("bad")`, budgets},
		{`function f() { return f() + 1; } f();`, budgets},
		{`call("mcp__t__x", [1])`, budgets},
	} {
		code, o := tc.code, Options{Call: refuse, Tools: tools, Budgets: tc.b}
		want, wantErr := Run(t.Context(), code, o)
		got, gotErr := Local(t.Context(), code, o)
		if string(got.Value) != string(want.Value) || !reflect.DeepEqual(got.Logs, want.Logs) || got.Calls != want.Calls {
			t.Errorf("%s: through the protocol %+v (%s), in process %+v (%s)", code, got, got.Value, want, want.Value)
		}
		if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
			t.Errorf("%s: through the protocol %v, in process %v", code, gotErr, wantErr)
		}
		if _, ok := errors.AsType[*BudgetError](wantErr); ok {
			if _, ok := errors.AsType[*BudgetError](gotErr); !ok {
				t.Errorf("%s: through the protocol %T, want a *BudgetError", code, gotErr)
			}
		}
	}
}

// Cancelling the trunk's side cancels the runner's run and the call it
// is waiting for.
func TestLocalCancelEndsCalls(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	saw := make(chan error, 1)
	call := func(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, error) {
		cancel()
		<-ctx.Done()
		saw <- ctx.Err()
		return nil, ctx.Err()
	}
	_, err := Local(ctx, `await call("mcp__t__x");`, Options{Call: call, Budgets: budgets})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("run: %v, want context.Canceled", err)
	}
	if got := <-saw; !errors.Is(got, context.Canceled) {
		t.Errorf("the call saw %v, want context.Canceled", got)
	}
}

// A program whose live heap grows past MaxMemoryBytes ends with that
// budget at the next collection; the next run works.
func TestServeMemoryBudget(t *testing.T) {
	b := budgets
	b.MaxMemoryBytes = 32 << 20
	// The test is about memory, not time: the wall-time budget only ends
	// a hog the memory budget missed, and is long because a starved
	// machine (a loop at nice 19, load 20) ran out of 10 s before the
	// hog had allocated its way past 32 MiB. The hog stops allocating at
	// 256 MiB (eight times the budget, so a collection has found more
	// than 32 MiB live by then) and spins, so that a missed budget costs
	// that much memory, not all of it.
	b.WallTime = 2 * time.Minute
	_, err := Local(t.Context(), `const a = []; for (let i = 0; i < 256; i++) a.push("y".repeat(1 << 20) + i); for (;;) {}`, Options{Call: echo, Budgets: b})
	if be, ok := errors.AsType[*BudgetError](err); !ok || be.Budget != "maxMemoryBytes" || be.Limit != "33554432" {
		t.Fatalf("a memory hog: %v, want the budget maxMemoryBytes (33554432)", err)
	}
	res, err := Local(t.Context(), `return 6 * 7;`, Options{Call: echo, Budgets: b})
	if err != nil || string(res.Value) != "42" {
		t.Errorf("the next run: %s, %v", res.Value, err)
	}
}

// callerKey marks the run's context in TestLocalCallsAreTheCallers.
type callerKey struct{}

// Each call the runner makes back runs in the run's context, whose values
// say whose call it is (the trunk routes it as that caller's).
func TestLocalCallsAreTheCallers(t *testing.T) {
	ctx := context.WithValue(t.Context(), callerKey{}, "ada")
	call := func(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
		who, _ := ctx.Value(callerKey{}).(string)
		return json.RawMessage(`{"who":"` + who + `"}`), nil
	}
	res, err := Local(ctx, `return (await call("mcp__t__x")).who;`, Options{Call: call, Budgets: budgets})
	if err != nil || string(res.Value) != `"ada"` {
		t.Errorf("the call's caller: %s, %v; want \"ada\"", res.Value, err)
	}
}
