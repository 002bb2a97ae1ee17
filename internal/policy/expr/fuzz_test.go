package expr

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"
)

// FuzzAgainstCEL holds the subset to cel-go: every expression cel-go
// accepts over a rule's variables is either refused by ours at load or
// evaluated to the same value (or to an error by both), with the claims
// given. It tries the expression it is given as it is (mutated from the
// seeds), and one generated from gen by a small grammar of the subset,
// which reaches further than mutating text does.
func FuzzAgainstCEL(f *testing.F) {
	for i, src := range agreeing {
		f.Add(src, testClaims[i%len(testClaims)], []byte(src))
	}
	for i, src := range refusing {
		f.Add(src, testClaims[i%len(testClaims)], []byte{byte(i), byte(i * 7), byte(i * 13)})
	}
	env := celEnv(f)
	f.Fuzz(func(t *testing.T, src, claimsJSON string, gen []byte) {
		if len(src) > 2000 || len(claimsJSON) > 4000 {
			return
		}
		var claims map[string]any
		if json.Unmarshal([]byte(claimsJSON), &claims) != nil {
			claims = map[string]any{}
		}
		vars := activationFor(t, "{}")
		if claims != nil {
			vars["claims"] = claims
		}
		for _, s := range []string{src, generate(gen)} {
			if celPanics(env, s) {
				continue
			}
			if _, err := compareWithCEL(t, env, s, []map[string]any{vars}); err != nil && t.Failed() {
				t.Logf("expression: %s", s)
			}
		}
	})
}

// celPanics reports whether cel-go panics compiling src: not ours to judge.
func celPanics(env *cel.Env, src string) (panicked bool) {
	defer func() {
		if recover() != nil {
			panicked = true
		}
	}()
	ast, iss := env.Compile(src)
	if iss.Err() == nil {
		_, _ = env.Program(ast, cel.EvalOptions(cel.OptOptimize))
	}
	return false
}

// generator writes an expression of the subset (or near it) as gen's
// bytes choose, each choice one byte, zero when they run out.
type generator struct {
	gen []byte
	b   strings.Builder
}

func generate(gen []byte) string {
	g := &generator{gen: gen}
	g.expr(4)
	return g.b.String()
}

func (g *generator) pick(n int) int {
	if len(g.gen) == 0 {
		return 0
	}
	c := int(g.gen[0])
	g.gen = g.gen[1:]
	return c % n
}

func (g *generator) w(parts ...string) {
	for _, p := range parts {
		g.b.WriteString(p)
	}
}

var (
	genAtoms = []string{
		`claims.groups`, `claims.sub`, `claims.level`, `claims.email`, `claims.ratio`, `claims.nothing`,
		`claims.realm_access`, `claims`, `subject`, `server`, `kind`, `name`, `profile`, `exported`,
		`annotations.destructiveHint`, `annotations`, `annotations.title`, `x`, `y`,
		`0`, `1`, `-1`, `3`, `9223372036854775807`, `-9223372036854775808`, `0u`, `1u`, `18446744073709551615u`,
		`0.0`, `1.5`, `-0.0`, `1e300`, `3.0`, `""`, `"a"`, `"admin"`, `"ada"`, `b"a"`, `true`, `false`, `null`,
		`[]`, `{}`, `[1, "a"]`, `["admin", "dev"]`, `{"a": 1}`, `{1: 2u}`, `optional.none()`,
	}
	genBinary = []string{` + `, ` - `, ` * `, ` / `, ` % `, ` == `, ` != `, ` < `, ` <= `, ` > `, ` >= `, ` in `, ` && `, ` || `}
	genFields = []string{`sub`, `groups`, `roles`, `a`, `level`, `missing`}
	genCalls  = []string{`size`, `int`, `uint`, `double`, `string`, `bool`, `bytes`}
	genMethod = []string{`contains`, `startsWith`, `endsWith`, `matches`}
	genMacros = []string{`all`, `exists`, `exists_one`, `map`, `filter`}
)

func (g *generator) expr(depth int) {
	if depth == 0 {
		g.w(genAtoms[g.pick(len(genAtoms))])
		return
	}
	switch g.pick(14) {
	case 0, 1:
		g.w(genAtoms[g.pick(len(genAtoms))])
	case 2, 3:
		g.w("(")
		g.expr(depth - 1)
		g.w(genBinary[g.pick(len(genBinary))])
		g.expr(depth - 1)
		g.w(")")
	case 4:
		g.w([]string{"!", "-", "!!", "--"}[g.pick(4)], "(")
		g.expr(depth - 1)
		g.w(")")
	case 5:
		g.w("(")
		g.expr(depth - 1)
		g.w(" ? ")
		g.expr(depth - 1)
		g.w(" : ")
		g.expr(depth - 1)
		g.w(")")
	case 6:
		g.expr(depth - 1)
		g.w([]string{".", ".?"}[g.pick(2)], genFields[g.pick(len(genFields))])
	case 7:
		g.expr(depth - 1)
		g.w([]string{"[", "[?"}[g.pick(2)])
		g.expr(depth - 1)
		g.w("]")
	case 8:
		g.w(genCalls[g.pick(len(genCalls))], "(")
		g.expr(depth - 1)
		g.w(")")
	case 9:
		g.expr(depth - 1)
		g.w(".", genMethod[g.pick(len(genMethod))], "(")
		g.expr(depth - 1)
		g.w(")")
	case 10:
		g.expr(depth - 1)
		m := genMacros[g.pick(len(genMacros))]
		v := []string{"x", "y"}[g.pick(2)]
		g.w(".", m, "(", v, ", ")
		g.expr(depth - 1)
		if m == "map" && g.pick(2) == 0 {
			g.w(", ")
			g.expr(depth - 1)
		}
		g.w(")")
	case 11:
		g.expr(depth - 1)
		switch g.pick(4) {
		case 0:
			g.w(".orValue(")
			g.expr(depth - 1)
			g.w(")")
		case 1:
			g.w(".hasValue()")
		case 2:
			g.w(".value()")
		default:
			g.w(".or(")
			g.expr(depth - 1)
			g.w(")")
		}
	case 12:
		g.w([]string{"has(", "optional.of(", "optional.ofNonZeroValue("}[g.pick(3)])
		g.expr(depth - 1)
		if g.b.Len() > 0 && !strings.HasSuffix(g.b.String(), ")") {
			g.w(".", genFields[g.pick(len(genFields))])
		}
		g.w(")")
	default:
		open, end := "[", "]"
		isMap := g.pick(2) == 0
		if isMap {
			open, end = "{", "}"
		}
		g.w(open)
		for i, n := 0, g.pick(3); i < n; i++ {
			if i > 0 {
				g.w(", ")
			}
			if isMap {
				g.w([]string{`"a"`, `"b"`, `1`, `1u`, `true`, `subject`}[g.pick(6)], ": ")
			}
			g.expr(depth - 1)
		}
		g.w(end)
	}
}
