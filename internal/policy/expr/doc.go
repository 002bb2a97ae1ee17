// Package expr is the expression language of trunk.policy: a subset of
// CEL (the Common Expression Language), parsed, type-checked and
// evaluated with CEL's semantics as cel-go v0.31 gives them with
// cel.OptionalTypes(), so that a rule written for CEL means the same here
// or is refused when the config loads. It spares the trunk cel-go, which
// with protobuf, antlr and genproto would be a fifth of the binary and
// run their package inits at every start, policy or not.
//
// The subset:
//   - literals: int (decimal, 0x hex), uint (1u), double (1.5, 1e3, .5),
//     string ('...', "...", triple-quoted, raw r"...", CEL's escapes),
//     bytes (b"..."), bool, null, lists [...], maps {k: v} with int, uint,
//     string or bool keys;
//   - the declared variables, field selection on maps (claims.email; an
//     absent key is an error), has(m.f), indexing lists and maps, and the
//     optional forms m.?f, l[?i], m[?k], an optional chain going on
//     (claims.?a.b), .orValue(v), .or(o), .hasValue(), .value(),
//     optional.of(x), optional.ofNonZeroValue(x), optional.none();
//   - the operators ! - * / % + == != < <= > >= && || ?: and in, with
//     CEL's overflow and division errors (NaN is neither less, equal
//     nor greater than anything); && and || absorb an error
//     when the other side decides (false && error is false, in either
//     order); equality across int, uint and double by value, and false
//     between other types;
//   - size, contains, startsWith, endsWith, matches (RE2: Go's regexp),
//     the conversions int, uint, double, string, bool and bytes, and the
//     macros all, exists, exists_one, map (two and three arguments) and
//     filter.
//
// Everything else is refused at load, naming the construct: functions
// cel-go's default environment lacks (lowerAscii is an extension), type,
// dyn, timestamps and durations, messages, optional entries in list and
// map literals, a leading dot, and the places where this checker is
// stricter than cel-go's (a dyn argument to or(), a map literal whose key
// is not a literal's type). The checker refuses an unknown variable or
// function, an operator or function applied to types it does not take, a
// literal regular expression that does not compile, a conversion of a
// literal that fails (int("x"), as cel-go does at load) and, in Compile,
// an expression that cannot give a bool. An expression is at most 100 KiB,
// 10,000 nodes and 100 levels deep, so that a hostile config cannot
// exhaust the stack; an evaluation's macros visit at most MacroBudget
// elements in all, past which it fails, so that nested macros over long
// lists cannot run on. Where cel-go computes at load (x in [literals]: false for an
// empty list whatever x is), this package does the same.
//
// The tests hold it to cel-go: a table of expressions over several claim
// sets, and FuzzAgainstCEL, which mutates and generates expressions and
// claims and wants each that cel-go accepts refused here or evaluated to
// the same value.
package expr
