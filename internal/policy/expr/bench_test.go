package expr

import (
	"testing"

	"github.com/google/cel-go/cel"
)

// BenchmarkEval evaluates the documented rules per caller and item, with
// this package and with cel-go, as internal/policy evaluates each rule for
// each item of a catalog.
func BenchmarkEval(b *testing.B) {
	vars := activationFor(b, testClaims[1])
	for _, src := range []string{
		`"admin" in claims.?groups.orValue([])`,
		`annotations.destructiveHint && !("admin" in claims.?groups.orValue([]))`,
		`claims.email.endsWith("@example.com") && server == "weather"`,
	} {
		b.Run("ours/"+src, func(b *testing.B) {
			p, err := Compile(src, testVars)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := p.Eval(vars); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("cel-go/"+src, func(b *testing.B) {
			env := celEnv(b)
			ast, iss := env.Compile(src)
			if iss.Err() != nil {
				b.Fatal(iss.Err())
			}
			prg, err := env.Program(ast, cel.EvalOptions(cel.OptOptimize))
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, _, err := prg.Eval(vars); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
