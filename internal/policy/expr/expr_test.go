package expr

import (
	"fmt"
	"strings"
	"testing"
)

var testClaims = []string{
	`{}`,
	`{"sub": "ada", "email": "ada@example.com", "groups": ["admin", "dev"], "level": 3, "ratio": 0.5, "verified": true, "realm_access": {"roles": ["ops"]}, "nothing": null}`,
	`{"sub": "sam", "groups": ["support"], "level": "high", "realm_access": {}, "big": 1e300, "neg": -2, "huge": 18446744073709551615}`,
	`{"groups": "admin", "level": 9007199254740993, "email": 5, "realm_access": [1, 2]}`,
}

// Expressions both evaluators accept, and must evaluate alike with every
// one of testClaims.
var agreeing = []string{
	// the documented rules
	`"admin" in claims.?groups.orValue([])`,
	`"support" in claims.?groups.orValue([]) && server == "weather"`,
	`annotations.destructiveHint && !("admin" in claims.?groups.orValue([]))`,
	`"groups" in claims && "admin" in claims.groups`,
	`annotations.destructiveHint == true && !("admin" in claims.groups)`,
	`claims.level > 3`, `claims.level >= 3`, `claims.level < 3.5`, `claims.level <= 3u`,
	`claims.level == 3`, `claims.level == 3u`, `claims.level == 3.0`, `claims.level != "3"`,
	`claims.level == 9007199254740992`, `claims.level > 9007199254740992`,
	`claims.email.endsWith("@example.com")`, `claims.email.startsWith("ada")`, `claims.email.contains("@")`,
	`claims.email.matches("^[a-z]+@example[.]com$")`, `matches(claims.email, "a.a")`, `claims.email.matches(subject)`,
	`has(claims.email)`, `has(claims.realm_access.roles)`, `has(claims.nothing)`, `has(annotations.title)`,
	`claims.?realm_access.?roles.orValue([]).exists(r, r == "ops")`,
	`claims.?realm_access.roles.hasValue()`,
	`claims.?missing.hasValue()`, `claims.?sub.value() == subject`, `claims.?missing.value() == 1`,
	`claims.?missing.or(claims.?sub).orValue("x") == "ada"`, `claims.?x.y`, `claims.?x[0]`, `claims.?realm_access.roles[0]`,
	`claims.?sub.orValue(claims.missing) == "ada"`,
	`claims[?"groups"].orValue(["none"])[0] == "admin"`, `claims.?groups[?0].orValue("") == "admin"`,
	`claims.?groups[?5].hasValue()`, `[1, 2][?2].hasValue()`, `{"a": 1}[?"a"].value() == 1`,
	`optional.of(1).value() == 1`, `optional.none().hasValue()`, `optional.none().orValue(2) == 2`,
	`optional.ofNonZeroValue("").hasValue()`, `optional.ofNonZeroValue(0).hasValue()`, `optional.ofNonZeroValue([1]).hasValue()`,
	`optional.none() == optional.none()`,
	`claims.groups.exists(g, g.startsWith("ad"))`, `claims.groups.all(g, g != "")`, `claims.groups.exists_one(g, g == "dev")`,
	`claims.groups.map(g, g + "!")[0] == "admin!"`, `claims.groups.filter(g, g != "admin") == ["dev"]`,
	`claims.groups.map(g, g != "dev", size(g)) == [5]`, `size(claims.groups) == 2`, `claims.groups.size() > 0`,
	`claims.all(k, k != "")`, `claims.exists(k, claims[k] == null)`, `claims.exists_one(k, k == "sub")`,
	`[1, 2, 3].all(x, x > 0)`, `[1, "a"].all(x, x > 0)`, `["a", 1].all(x, x > 0)`, `[0, "a"].all(x, x > 0)`,
	`[1, "a"].exists(x, x > 0)`, `["a", 1].exists(x, x > 0)`, `[0, "a"].exists(x, x > 0)`,
	`[1, 1, "a"].exists_one(x, x > 0)`, `[1, 2].exists_one(x, x > 1)`,
	`[1, 2, 3].map(x, x * 2) == [2, 4, 6]`, `[1, 2, 3].filter(x, x % 2 == 1).size() == 2`,
	`[[1, 2], [3]].exists(l, l.exists(x, x == 3))`, `[1, 2].exists(x, [3, 4].exists(y, x + y == 5))`,
	`[1, 2].exists(claims, claims == 2)`,
	`{"a": 1, "b": 2}.all(k, k in ["a", "b"])`, `{"a": 1, "b": 2}.map(k, k).size() == 2`,
	`false && claims.missing`, `claims.missing && false`, `true || claims.missing`, `claims.missing || true`,
	`true && claims.missing`, `claims.missing || false`, `claims.missing && claims.other`,
	`claims.level && false`, `false || claims.level`, `1 == 1 && 2 == 2 && 3 == 4`, `false || false || true`,
	`claims.verified ? server == "weather" : false`, `claims.level > 1 ? true : claims.missing`,
	`true ? 1 : 2`, `false ? "a" : "b"`, `claims.level ? 1 : 2`,
	`!true`, `!!true`, `!claims.verified`, `-1`, `- -1`, `--1`, `-(1)`, `-(-9223372036854775807 - 1)`,
	`-9223372036854775808`, `9223372036854775807 + 1`, `-9223372036854775807 - 2`, `9223372036854775807 * 2`,
	`-9223372036854775808 / -1`, `-9223372036854775808 % -1`, `1 / 0`, `1 % 0`, `1u / 0u`, `1u % 0u`, `1.0 / 0.0`,
	`-1.0 / 0.0`, `0.0 / 0.0`, `0u - 1u`, `18446744073709551615u + 1u`, `4294967296u * 4294967296u`,
	`7 / 2`, `-7 / 2`, `-7 % 3`, `7 % -3`, `7u / 2u`, `7.0 / 2.0`, `2.5 * 2.0`, `1.0 - 0.5`, `3 - 5`,
	`"a" + "b"`, `b"a" + b"b"`, `[1] + [2]`,
	`claims.level + 1`, `claims.level * 2.0`, `claims.level - 1u`, `claims.ratio * 2.0 == 1.0`,

	`"a" < "b"`, `"B" < "a"`, `b"a" < b"b"`, `false < true`, `true >= true`, `null == null`,
	`claims.nothing == null`, `claims.sub == null`, `claims.missing == null`,
	`[1, 2] == [1, 2]`, `[1, 2] == [1.0, 2u]`, `[1] == [1, 2]`, `{"a": 1} == {"b": 1}`,
	`{1: "a"}[2]`, `{"a": 1}["b"]`,
	`2 in {1: "a"}`, `"a" in {"a": 1}`, `"x" in ["a", 1]`,
	`[1, 2][1] == 2`, `[1, 2][2]`, `[1, 2][-1]`,
	`claims.groups[0] == "admin"`, `claims.groups[1.0] == "dev"`, `claims["sub"] == "ada"`,
	`claims.realm_access.roles[0]`, `claims.realm_access["roles"] == ["ops"]`, `claims.sub.x`, `claims.sub[0]`,
	`{"a": 1, "a": 2}`, `{true: 1, 1: 2}[true]`,
	`size("héllo") == 5`, `size(b"h\xc3\xa9") == 3`, `size({}) == 0`, `"héllo".size()`, `size(claims)`,
	`int("12") == 12`, `int(2.9) == 2`, `int(-2.9) == -2`, `int(claims.ratio)`, `int(claims.level)`,
	`uint(1)`, `uint("42")`,
	`double(1) == 1.0`, `double(1u)`, `double("1.5")`, `double("inf")`, `double("NaN") != double("NaN")`,
	`string(1)`, `string(1u)`, `string(1.5)`, `string(1e21)`, `string(0.000001)`, `string(-0.0)`, `string(true)`, `string(b"abc")`,
	`string(claims.level)`, `string(claims.ratio)`, `bool("true")`, `bool("T")`, `bool(true)`,
	`bytes("é") == b"\xc3\xa9"`, `bytes(b"a")`,
	`"\x41\u00e9\U0001F600\101\a\b\f\n\r\t\v\\\'\"\?\x60"`, `'single' + "double"`, `"""triple "quoted" string"""`,
	`'''it's'''`, `r"raw\n" == "raw\\n"`, `R'raw\x'`, `b"\x00\xff"`, `br"\x00"`, `B"x"`,
	`0x10 == 16`, `0x10u == 16u`, `1e3 == 1000.0`, `.5 == 0.5`, `1.5e-3`, `1E2`, `0xFFFFFFFFFFFFFFFFu`,
	`size(subject) > 0 && kind == "tool" && name != exported && profile == ""`,
	`annotations.readOnlyHint || !annotations.destructiveHint`, `annotations.title.contains("cast")`,
	`claims.big > 1e299`, `claims.huge > 0`, `claims.huge == 18446744073709551615u`, `claims.neg < 0u`,
	`[1, 2, 3].map(x, [x]).size()`, `[1].map(x, {"k": x})[0].k`, `{"a": {"b": 1}}.a.b`, `{"a": {"b": 1}}.?a.?b.orValue(0)`,
	`[claims.level, 1]`, `[subject, claims.sub] == ["ada", "ada"]`,
	`claims.groups.exists(g, g == claims.missing)`, `claims.groups.all(g, g.size() > 100 || claims.missing)`,
	`"a" // a comment
	== "a"`,
	`010 == 10`, `size("\xff") == 1`, `"\xff" == "ÿ"`, `size(b"\xff")`, `size(b"ÿ")`, `"\377" == "ÿ"`, `"\u00E9" == "é"`,
	`1.5e+3 == 1500.0`, `.5e1`, `-0x10 == -16`, `-0x8000000000000000`, `"""a"b"""`, `'a\'b'`, `r"\"`, `[1,2,]`, `{"a":1,}`,
	`"abc".matches("^a")`, `"abc".matches("b")`, `"é" < "z"`, `b"\xff" > b"a"`, `string(1e100)`, `string(123456789.0)`,
	`string(1e-7)`, `double("-0")`, `int("-0")`, `int("+1")`, `double("1_000")`, `double("0x1p4")`, `int(-0.5)`, `uint(0.9)`,
	`1 == 1 == true`, `1 < 2 == true`, `"a" in ["a"] == true`, `!true == false`, `-1 * -1`, `2 - -1`,
	`claims.level in {"a": 1}`, `claims.groups in {"a": 1}`, `3 in claims.groups`, `"dev" in claims.groups`,
	`claims.?groups.orValue(["x"]).exists(g, g == "x")`, `claims.?level.orValue(0) > 2`, `[1, 2, 3].exists_one(x, x / 0 == 1)`,
	`[].all(x, x)`, `[].exists(x, x / 0 == 1)`, `{}.exists(k, true)`, `claims.exists(k, k.startsWith("gr"))`,
	`claims.map(k, k).size()`, `claims.filter(k, k == "sub")`, `annotations.filter(k, annotations[k] == true)`,
	`0.0 / 0.0 < 1.0`, `0.0 / 0.0 >= 0.0`, `1.0 > 0.0 / 0.0`, `[0.0 / 0.0, "a"][0] < "a"`, `["a", 0.0 / 0.0][0] < [0.0 / 0.0][0]`,
	`[null, 1][0] < 0.0 / 0.0`, `[[1], 1][0] < 0.0 / 0.0`, `claims.level <= 0.0 / 0.0`,
}

// Expressions outside the subset, or that the checker refuses: ours must
// refuse them at load, whatever cel-go makes of them.
var refusing = []string{
	`server ==`, `claimz.groups`, `subject + 1`, `subject == 1`, `-"a"`, `!1`, `1 && true`,
	`claims.x.y(1)`, `subject.lowerAscii()`, `type(1) == int`, `dyn(1) == 1`, `timestamp("2020-01-01T00:00:00Z")`,
	`duration("1s")`, `[?claims.x]`, `{?"a": claims.?x}`, `.claims`, `google.protobuf.Value{}`, `x`,
	`has(claims)`, `has(claims.?x)`, `[1].all(1, true)`, `[1].all(x, x)`,
	`subject.matches("[")`, `matches("a", "(")`, `size(1)`, `1.size()`, `"a".contains(1)`, `int(true)`,
	`bool(1)`, `"a" in "abc"`, `1 in ["a"]`, `optional.of(optional.none())`, `true ? 1 : "a"`,
	`[1, optional.none()]`, `1 % 2.0`, `1.0 % 2.0`, `"a" - "b"`, `[1] * 2`, `{1.0: 1}`, `{[1]: 1}`,
	`9223372036854775808`, `18446744073709551616u`, `"unterminated`, `'\q'`, `"\uD800"`, `1 ? 2 : 3`,
	`subject.startsWith()`, `size()`, `optional.none(1)`, `claims.exists(k, v, true)`, `[1].map(x, x, x)`,
	`let`, `while == 1`, `a.b.c`, `[1][?"a"]`, `subject[0]`, `subject.x`, `!-1`, `-!true`,
	`claims.?groups.orValue(1) == 1 && (claims.?groups.orValue(optional.none()))`,
	// cel-go's checker wants both sides of an operator of one type, and
	// it computes a conversion of a literal at load.
	`1 + 1u`, `1 + 1.0`, `[1] + ["a"]`, `1 == 1.0`, `1 == 1u`, `1u == 1.0`, `1 != 2.0`, `1 < 1.5`,
	`2u > 1.5`, `-1 < 1u`, `1.5 < 2`, `{"a": 1} == {"a": 1.0}`, `{1: "a"}[1.0] == "a"`, `{1: "a"}[1u] == "a"`,
	`{1u: "a"}[1] == "a"`, `1.0 in {1: "a"}`, `1 in [1.0, 2.0]`, `[1, 2][1u] == 2`, `[1, 2][1.0] == 2`, `claims[1]`,
	`optional.of(1) == optional.of(1.0)`, `int(" 12")`, `int("0x10")`, `int(1e19)`, `int(18446744073709551615u)`,
	`int(-9.223372036854775808e18)`, `uint(-1)`, `uint(-0.5)`, `uint(1.8446744073709552e19)`, `double("x")`,
	`string(b"\xff")`, `bool("yes")`, `rb"a"`, `optional.of(1).or(2)`, `optional.none() == null`,
	// ours is stricter than cel-go here
	`{claims.level: 1}`, `claims.in`, `claims.true`, `0X10`, `[1].map(__result__, __result__)`, `b"\u00ff"`,
	`uint("+1")`, `double(" 1")`, `double("1e400")`, `size(x,)`, `claims.?sub.or(claims.missing)`, `claims.?sub.or(claims.?missing.value()) == claims.?sub`,
	strings.Repeat("(", maxDepth+1) + `true` + strings.Repeat(")", maxDepth+1),
	strings.Repeat("!", 2*maxDepth) + `x`,
	strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1),
	strings.TrimSuffix(strings.Repeat("1 + ", maxNodes), " + "),
}

func TestAgainstCEL(t *testing.T) {
	env := celEnv(t)
	var activations []map[string]any
	for _, c := range testClaims {
		activations = append(activations, activationFor(t, c))
	}
	for _, src := range agreeing {
		v, err := compareWithCEL(t, env, src, activations)
		if v != agreed {
			t.Errorf("%s: %s (%v)", src, []string{"both refuse", "cel-go refuses, ours accepts", "ours refuses, cel-go accepts"}[v], err)
		}
	}
	for _, src := range refusing {
		v, err := compareWithCEL(t, env, src, activations)
		switch v {
		case agreed, celRefused:
			t.Errorf("%s: ours accepts it, want it refused (cel-go: %v)", src, err)
		}
	}
}

// A refusal names what it refuses; the rule's name is the caller's to add.
func TestCompileRefuses(t *testing.T) {
	for src, want := range map[string]string{
		`server == "a"`:                "undeclared reference to 'server'",
		`subject`:                      "the expression is a string, want a bool",
		`subject ==`:                   "Syntax error: ",
		`size(claims) + 1`:             "the expression is a int, want a bool",
		`subject.lowerAscii() == "a"`:  "undeclared reference to 'lowerAscii'",
		`subject.matches("[")`:         "invalid regular expression",
		`subject + 1 == "a"`:           "found no matching overload for '_+_' applied to '(string, int)'",
		`[?claims.x] == []`:            "optional entries of a list or map are not supported",
		`a{} == 1`:                     "message construction is not supported",
		`.subject == "a"`:              "a name from the root scope",
		`[1].all(x.y, true)`:           "argument is not an identifier",
		`has(subject)`:                 "invalid argument to has() macro",
		`subject == "\q"`:              "invalid escape sequence",
		strings.Repeat("(", 200) + "1": "nests deeper than 100",
	} {
		_, err := Compile(src, map[string]*Type{"subject": String, "claims": MapOf(String, Dyn)})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Compile(%q) = %v, want an error saying %q", src, err, want)
		}
	}
}

// Eval reports what it could not evaluate, and a result that is not a bool.
func TestEval(t *testing.T) {
	vars := map[string]*Type{"claims": MapOf(String, Dyn)}
	for _, tc := range []struct {
		src     string
		claims  map[string]any
		want    bool
		wantErr string
	}{
		{`claims.level > 3`, map[string]any{"level": 4}, true, ""},
		{`claims.level > 3`, map[string]any{"level": int32(2)}, false, ""},
		{`claims.level > 3`, map[string]any{"level": 3.5}, true, ""},
		{`claims.level > 3`, map[string]any{"level": "high"}, false, "no such overload"},
		{`claims.level > 3`, map[string]any{}, false, "no such key: level"},
		{`claims.x`, map[string]any{"x": "yes"}, false, "gave a string, not a bool"},
		{`claims.x`, map[string]any{"x": true}, true, ""},
		{`"a" in claims.groups`, map[string]any{"groups": []string{"b", "a"}}, true, ""},
		{`claims.x == 1`, map[string]any{"x": struct{}{}}, false, "unsupported type"},
	} {
		p, err := Compile(tc.src, vars)
		if err != nil {
			t.Fatalf("Compile(%q): %v", tc.src, err)
		}
		got, err := p.Eval(map[string]any{"claims": tc.claims})
		if got != tc.want || (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%s with %v = %v, %v; want %v and an error saying %q", tc.src, tc.claims, got, err, tc.want, tc.wantErr)
		}
	}
}

// Where cel-go computes at load, ours does alike: a value is in an empty
// list of literals never, even when it cannot be evaluated, and a list of
// literals is a set that holds each number in its other numeric types.
var constantFolding = []string{
	`claims.missing in []`, `claims.groups in ["admin"]`, `claims.level in [3, "a"]`, `claims.level in [3u]`,
	`claims.ratio in [0.5, 1]`, `claims.nothing in [1]`, `claims.huge in [18446744073709551615u]`,
	`claims.level in [9007199254740993]`, `9007199254740993 in [claims.level]`, `claims.level in [9007199254740992.0]`,
	`claims.realm_access in ["a"]`, `[b"a", 1][0] in ["a"]`, `[[1], 1][0] in [1]`, `claims.missing in [1]`, `claims.level in [[1]]`,
	`int(string(1)) == 1`, `int(double("1e3")) == 1000`, `claims.sub in [string(1), "ada"]`,
}

func TestConstantFoldingAsCEL(t *testing.T) {
	env := celEnv(t)
	var activations []map[string]any
	for _, c := range testClaims {
		activations = append(activations, activationFor(t, c))
	}
	for _, src := range constantFolding {
		if v, err := compareWithCEL(t, env, src, activations); v != agreed {
			t.Errorf("%s: not accepted by both (%v)", src, err)
		}
	}
}

// An allow-list of thousands of names compiles; what would nest past the
// limits is refused at load rather than exhausting the stack.
func TestLimits(t *testing.T) {
	vars := map[string]*Type{"subject": String}
	names := make([]string, 3000)
	for i := range names {
		names[i] = `"user` + strings.Repeat("x", i%7) + `@example.com"`
	}
	names[2999] = `"ada"`
	p, err := Compile(`subject in [`+strings.Join(names, ", ")+`]`, vars)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := p.Eval(map[string]any{"subject": "ada"}); !ok || err != nil {
		t.Fatalf("subject in a list of 3000: %v, %v", ok, err)
	}
	long := `size(subject) == ` + strings.TrimSuffix(strings.Repeat("1 + ", 4000), " + ")
	if p, err := Compile(long, vars); err != nil {
		t.Fatalf("a sum of 4000 terms: %v", err)
	} else if ok, err := p.Eval(map[string]any{"subject": strings.Repeat("a", 4000)}); !ok || err != nil {
		t.Fatalf("a sum of 4000 terms: %v, %v", ok, err)
	}
	for _, src := range []string{
		strings.Repeat("(", 100000),
		strings.Repeat("[", 100000),
		strings.Repeat("-(", 50000),
		strings.Repeat("a.b(", 20000),
		strings.Repeat("x ? y : ", 30000) + "z",
		strings.Repeat("x", maxSource+1),
	} {
		if _, err := Compile(src, vars); err == nil {
			t.Errorf("Compile of %.20q... (%d bytes) accepted it", src, len(src))
		}
	}
}

// A panic in the evaluator is an error and false, never true: a deny rule
// that panics denies, an allow rule allows nothing. A nil *mapValue is a
// value the evaluator never makes, on which reading a field panics.
func TestEvalPanicIsAnError(t *testing.T) {
	p, err := Compile(`!claims.x.y`, map[string]*Type{"claims": MapOf(String, Dyn)})
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Eval(map[string]any{"claims": map[string]any{"x": (*mapValue)(nil)}})
	if got || err == nil || !strings.Contains(err.Error(), "internal error") {
		t.Errorf("an evaluation that panics = %v, %v; want false and an error saying it was an internal error", got, err)
	}
}

// Nested macros over a long list are refused at evaluation once they pass
// MacroBudget, with an error naming the budget; rules that stay within it
// evaluate as before.
func TestMacroBudget(t *testing.T) {
	vars := map[string]*Type{"claims": MapOf(String, Dyn)}
	groups := make([]any, 1000)
	for i := range groups {
		groups[i] = fmt.Sprintf("group%d", i)
	}
	claims := map[string]any{"groups": groups}
	for _, tc := range []struct {
		src     string
		want    bool
		wantErr string
	}{
		// 1000 x 1000 steps, a million
		{`claims.groups.all(a, claims.groups.exists(b, a == b))`, false, "100000 steps"},
		{`claims.groups.map(a, claims.groups.filter(b, a != b)).size() > 0`, false, "100000 steps"},
		// within the budget: 1000 steps, and 1000 + 10 x 1000
		{`claims.groups.exists(g, g == "group999")`, true, ""},
		{`claims.groups.filter(g, g.endsWith("9")).size() == 100`, true, ""},
		{`claims.groups.filter(g, size(g) == 6).all(a, claims.groups.exists(b, a == b))`, true, ""},
	} {
		p, err := Compile(tc.src, vars)
		if err != nil {
			t.Fatalf("Compile(%q): %v", tc.src, err)
		}
		got, err := p.Eval(map[string]any{"claims": claims})
		if got != tc.want || (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%s over 1000 groups = %v, %v; want %v and an error saying %q", tc.src, got, err, tc.want, tc.wantErr)
		}
	}
}
