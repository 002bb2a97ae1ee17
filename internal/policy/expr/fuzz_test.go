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
// seeds), and one generated from gen by a small grammar of the subset or
// by a generator of well-typed expressions, which reach further than
// mutating text does.
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
	gen   []byte
	b     strings.Builder
	scope []string // the iteration variables in scope, for typed
}

// generate writes, as gen's first byte says, an expression of the
// grammar (most of them refused by one checker or both) or a well typed
// bool expression.
func generate(gen []byte) string {
	g := &generator{gen: gen}
	if g.pick(2) == 0 {
		g.expr(4)
	} else {
		g.typed("bool", 5)
	}
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

// typed writes an expression of the kind asked for ("bool", "int",
// "double", "string", "list" of strings, "ints" (a list of ints) or
// "dyn"), well typed as far as the variables' types tell, so that most
// of them pass both checkers and reach evaluation.
func (g *generator) typed(kind string, depth int) {
	leaf := depth <= 0
	choose := func(opts ...func()) {
		n := len(opts)
		if leaf {
			n = 1
		}
		opts[g.pick(n)]()
	}
	lit := func(choices ...string) func() { return func() { g.w(choices[g.pick(len(choices))]) } }
	bin := func(a, op, b string) func() {
		return func() { g.w("("); g.typed(a, depth-1); g.w(op); g.typed(b, depth-1); g.w(")") }
	}
	call := func(pre, arg, post string) func() {
		return func() { g.w(pre); g.typed(arg, depth-1); g.w(post) }
	}
	method := func(recv, name, arg string) func() {
		return func() { g.typed(recv, depth-1); g.w("." + name + "("); g.typed(arg, depth-1); g.w(")") }
	}
	macro := func(name string) func() {
		return func() {
			if g.pick(2) == 0 {
				g.typed("list", depth-1)
				g.w("." + name + "(s, ")
				g.scope = append(g.scope, "s")
			} else {
				g.typed("ints", depth-1)
				g.w("." + name + "(i, ")
				g.scope = append(g.scope, "i")
			}
			g.typed("bool", depth-1)
			g.scope = g.scope[:len(g.scope)-1]
			g.w(")")
		}
	}
	inScope := func(v string) bool {
		for _, s := range g.scope {
			if s == v {
				return true
			}
		}
		return false
	}
	switch kind {
	case "bool":
		choose(lit("true", "false", "annotations.destructiveHint", "claims.verified", `has(claims.email)`, `has(claims.realm_access.roles)`),
			bin("int", " == ", "int"), bin("int", " < ", "int"), bin("double", " >= ", "double"), bin("dyn", " == ", "int"),
			bin("string", " == ", "string"), bin("string", " < ", "string"), bin("dyn", " != ", "string"), bin("dyn", " > ", "dyn"),
			bin("string", " in ", "list"), bin("int", " in ", "ints"), bin("dyn", " in ", "list"), bin("list", " == ", "list"),
			bin("bool", " && ", "bool"), bin("bool", " || ", "bool"), call("!(", "bool", ")"),
			method("string", "contains", "string"), method("string", "startsWith", "string"), method("string", "endsWith", "string"),
			func() {
				g.typed("string", depth-1)
				g.w(`.matches("`, []string{"^a", "d.", "[0-9]+", "@example[.]com$"}[g.pick(4)], `")`)
			},
			func() { g.w("claims.?", genFields[g.pick(len(genFields))], ".hasValue()") },
			func() {
				g.w("(")
				g.typed("bool", depth-1)
				g.w(" ? ")
				g.typed("bool", depth-1)
				g.w(" : ")
				g.typed("bool", depth-1)
				g.w(")")
			},
			macro("all"), macro("exists"), macro("exists_one"), call("bool(", "string", ")"), call("bool(", "dyn", ")"))
	case "int":
		opts := []func(){lit("0", "1", "-1", "2", "9223372036854775807", "-9223372036854775808"),
			bin("int", " + ", "int"), bin("int", " - ", "int"), bin("int", " * ", "int"), bin("int", " / ", "int"), bin("int", " % ", "int"),
			call("-(", "int", ")"), call("size(", "string", ")"), call("size(", "list", ")"), call("int(", "double", ")"),
			call("int(", "string", ")"), call("int(", "dyn", ")"),
			func() { g.typed("ints", depth-1); g.w("["); g.typed("int", depth-1); g.w("]") }}
		if inScope("i") {
			opts = append(opts, lit("i"))
		}
		choose(opts...)
	case "double":
		choose(lit("0.0", "1.5", "-0.0", "1e300", "0.5"), bin("double", " + ", "double"), bin("double", " * ", "double"),
			bin("double", " / ", "double"), call("double(", "int", ")"), call("double(", "dyn", ")"), call("double(", "string", ")"))
	case "string":
		opts := []func(){lit(`""`, `"a"`, `"admin"`, `"ada"`, `"ada@example.com"`, `"é"`, "subject", "server", "kind", "name"),
			bin("string", " + ", "string"), call("string(", "int", ")"), call("string(", "double", ")"), call("string(", "dyn", ")"),
			func() { g.w(`claims.?sub.orValue(`); g.typed("string", depth-1); g.w(")") },
			func() { g.typed("list", depth-1); g.w("["); g.typed("int", depth-1); g.w("]") }}
		if inScope("s") {
			opts = append(opts, lit("s"))
		}
		choose(opts...)
	case "list":
		choose(lit(`["admin", "dev"]`, `[]`, `["a"]`),
			func() { g.w("claims.?groups.orValue(["); g.typed("string", depth-1); g.w("])") },
			bin("list", " + ", "list"),
			func() {
				g.typed("list", depth-1)
				g.w(".filter(s, ")
				g.scope = append(g.scope, "s")
				g.typed("bool", depth-1)
				g.scope = g.scope[:len(g.scope)-1]
				g.w(")")
			},
			func() {
				g.typed("ints", depth-1)
				g.w(".map(i, ")
				g.scope = append(g.scope, "i")
				g.typed("string", depth-1)
				g.scope = g.scope[:len(g.scope)-1]
				g.w(")")
			})
	case "ints":
		choose(lit(`[1, 2, 3]`, `[]`, `[0]`, `[-1, 9223372036854775807]`),
			bin("ints", " + ", "ints"),
			func() {
				g.typed("list", depth-1)
				g.w(".map(s, ")
				g.scope = append(g.scope, "s")
				g.typed("int", depth-1)
				g.scope = g.scope[:len(g.scope)-1]
				g.w(")")
			})
	default: // dyn
		choose(func() { g.w("claims.", genFields[g.pick(len(genFields))]) },
			lit("claims.level", "claims.ratio", "claims.email", "claims.nothing", "annotations.title", `claims["sub"]`),
			func() {
				g.w("claims.?", genFields[g.pick(len(genFields))], ".orValue(")
				g.typed("int", depth-1)
				g.w(")")
			},
			func() { g.w("claims.groups["); g.typed("int", depth-1); g.w("]") },
			func() {
				g.w("claims.?realm_access.roles[?")
				g.typed("int", depth-1)
				g.w("].orValue(")
				g.typed("string", depth-1)
				g.w(")")
			})
	}
}
