package codemode

import (
	"context"
	"testing"
)

// BenchmarkRun is the engine's own cost per run: a new runtime, the
// program compiled and run, its calls settled (echo answers at once).
func BenchmarkRun(b *testing.B) {
	for _, bc := range []struct{ name, code string }{
		{"empty", `return 1;`},
		{"one call", `return (await call("mcp__t__x", {a: 1})).structuredContent;`},
		{"ten calls at once", `return (await Promise.all(Array.from({length: 10}, (_, i) => call("mcp__t__x", {i})))).length;`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := Run(context.Background(), bc.code, Options{Call: echo, Budgets: budgets}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
