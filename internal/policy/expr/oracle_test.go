package expr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// The variables of a policy rule, declared to both evaluators alike.
var (
	testVars = map[string]*Type{
		"subject": String, "claims": MapOf(String, Dyn), "profile": String, "server": String,
		"kind": String, "name": String, "exported": String, "annotations": MapOf(String, Dyn),
	}
	celVars = []cel.EnvOption{
		cel.OptionalTypes(),
		cel.Variable("subject", cel.StringType),
		cel.Variable("claims", cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable("profile", cel.StringType),
		cel.Variable("server", cel.StringType),
		cel.Variable("kind", cel.StringType),
		cel.Variable("name", cel.StringType),
		cel.Variable("exported", cel.StringType),
		cel.Variable("annotations", cel.MapType(cel.StringType, cel.DynType)),
	}
)

func celEnv(t testing.TB) *cel.Env {
	env, err := cel.NewEnv(celVars...)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// activationFor is the variables of a rule for claims given as JSON, as
// a token's verifier decodes them.
func activationFor(t testing.TB, claimsJSON string) map[string]any {
	var claims map[string]any
	if err := json.Unmarshal([]byte(claimsJSON), &claims); err != nil {
		t.Fatalf("claims %s: %v", claimsJSON, err)
	}
	if claims == nil {
		claims = map[string]any{}
	}
	return map[string]any{
		"subject": "ada", "claims": claims, "profile": "", "server": "weather", "kind": "tool",
		"name": "forecast", "exported": "mcp__weather__forecast",
		"annotations": map[string]any{"readOnlyHint": false, "destructiveHint": true, "title": "Forecast"},
	}
}

// verdict is how the two evaluators compared on one expression.
type verdict int

const (
	bothRefused verdict = iota
	celRefused          // cel-go refuses, ours accepts
	oursRefused         // cel-go accepts, ours refuses
	agreed              // both accept and evaluate alike on every input
)

// compareWithCEL compiles src with both evaluators and, when both accept
// it, evaluates it with each activation, failing t where they differ.
func compareWithCEL(t testing.TB, env *cel.Env, src string, activations []map[string]any) (verdict, error) {
	ast, iss := env.Compile(src)
	var prg cel.Program
	celErr := iss.Err()
	if celErr == nil {
		prg, celErr = env.Program(ast, cel.EvalOptions(cel.OptOptimize))
	}
	ours, ourErr := compile(src, testVars)
	switch {
	case celErr != nil && ourErr != nil:
		return bothRefused, ourErr
	case celErr != nil:
		return celRefused, celErr
	case ourErr != nil:
		return oursRefused, ourErr
	}
	for _, vars := range activations {
		got, gotErr := ours.value(vars)
		if errors.Is(gotErr, errOverBudget) {
			continue // a difference by design: cel-go has no such budget
		}
		// A map's iteration order is unspecified, and cel-go's varies from
		// run to run: a result that depends on it agrees if any run does.
		var want any
		var wantErr error
		for try := 0; try < 8; try++ {
			out, _, err := prg.Eval(vars)
			want, wantErr = nil, err
			if err == nil {
				want = fromCEL(out)
			}
			if (gotErr != nil) == (wantErr != nil) && (gotErr != nil || same2(got, want)) {
				break
			}
		}
		switch {
		case gotErr != nil && wantErr != nil:
		case gotErr != nil || wantErr != nil:
			t.Errorf("%s with claims %v: ours %v (err %v), cel-go %v (err %v)", src, vars["claims"], show(got), gotErr, show(want), wantErr)
		case !same2(got, want):
			t.Errorf("%s with claims %v: ours %s, cel-go %s", src, vars["claims"], show(got), show(want))
		}
	}
	return agreed, nil
}

// fromCEL is a cel-go value in the form of ours.
func fromCEL(v ref.Val) any {
	switch x := v.(type) {
	case types.Null:
		return nil
	case types.Bool:
		return bool(x)
	case types.Int:
		return int64(x)
	case types.Uint:
		return uint64(x)
	case types.Double:
		return float64(x)
	case types.String:
		return string(x)
	case types.Bytes:
		return []byte(x)
	case *types.Optional:
		if !x.HasValue() {
			return optional{}
		}
		return optional{fromCEL(x.GetValue()), true}
	case traits.Mapper:
		m := &mapValue{}
		for it := x.Iterator(); it.HasNext() == types.True; {
			k := it.Next()
			m.keys = append(m.keys, fromCEL(k))
			m.vals = append(m.vals, fromCEL(x.Get(k)))
		}
		return m
	case traits.Lister:
		out := []any{}
		for it := x.Iterator(); it.HasNext() == types.True; {
			out = append(out, fromCEL(it.Next()))
		}
		return out
	}
	return fmt.Sprintf("unexpected cel-go value %T %v", v, v)
}

// same2 reports whether two values are the same in type and value (NaN
// the same as NaN), lists in order and maps whatever their order.
func same2(a, b any) bool {
	a, _ = native(a)
	b, _ = native(b)
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		return ok && (x == y && math.Signbit(x) == math.Signbit(y) || math.IsNaN(x) && math.IsNaN(y))
	case []byte:
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !same2(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any, *mapValue:
		if !isMap(b) || mapLen(x) != mapLen(b) {
			return false
		}
		ka, kb := canonicalKeys(x), canonicalKeys(b)
		for k, va := range ka {
			vb, ok := kb[k]
			if !ok || !same2(va, vb) {
				return false
			}
		}
		return true
	case optional:
		y, ok := b.(optional)
		return ok && x.ok == y.ok && (!x.ok || same2(x.v, y.v))
	}
	return a == b
}

func canonicalKeys(m any) map[string]any {
	out := map[string]any{}
	for _, k := range mapKeys(m) {
		v, _, _ := mapFind(m, k)
		out[fmt.Sprintf("%T:%v", k, k)] = v
	}
	return out
}

func show(v any) string {
	switch x := v.(type) {
	case *mapValue:
		parts := []string{}
		for i, k := range x.keys {
			parts = append(parts, fmt.Sprintf("%s: %s", show(k), show(x.vals[i])))
		}
		sort.Strings(parts)
		return fmt.Sprintf("%v", parts)
	case []any:
		parts := []string{}
		for _, e := range x {
			parts = append(parts, show(e))
		}
		return fmt.Sprintf("%v", parts)
	case optional:
		if !x.ok {
			return "optional.none()"
		}
		return "optional.of(" + show(x.v) + ")"
	}
	return fmt.Sprintf("%T(%#v)", v, v)
}
