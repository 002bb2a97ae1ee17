package expr

import (
	"fmt"
	"math"
	"regexp"
	"strings"
)

// scope is the iteration variables of the comprehensions around a node,
// innermost first.
type scope struct {
	name   string
	typ    *Type
	parent *scope
}

func (s *scope) lookup(name string) (*Type, bool) {
	for ; s != nil; s = s.parent {
		if s.name == name {
			return s.typ, true
		}
	}
	return nil, false
}

type checker struct {
	vars map[string]*Type
}

func (c *checker) fail(n *node, format string, args ...any) {
	panic(&Error{pos: n.pos, Msg: fmt.Sprintf(format, args...)})
}

func (c *checker) noOverload(n *node, fn string, types ...*Type) {
	names := make([]string, len(types))
	for i, t := range types {
		names[i] = t.String()
	}
	c.fail(n, "found no matching overload for '%s' applied to '(%s)'", fn, strings.Join(names, ", "))
}

// check finds the type of n and of every node below it, or panics with
// an *Error saying what it refuses.
func (c *checker) check(n *node, sc *scope) *Type {
	t := c.typeOf(n, sc)
	n.typ = t
	return t
}

// boolish reports whether t may be where CEL wants a bool.
func boolish(t *Type) bool { return t.Kind == KindBool || t.Kind == KindDyn }

func (c *checker) typeOf(n *node, sc *scope) *Type {
	switch n.op {
	case nLit:
		switch n.val.(type) {
		case nil:
			return Null
		case bool:
			return Bool
		case int64:
			return Int
		case uint64:
			return Uint
		case float64:
			return Double
		case string:
			return String
		case []byte:
			return Bytes
		}
	case nIdent:
		if t, ok := sc.lookup(n.name); ok {
			return t
		}
		if t, ok := c.vars[n.name]; ok {
			return t
		}
		c.fail(n, "undeclared reference to '%s'", n.name)
	case nSelect:
		xt := c.check(n.x, sc)
		if xt.Kind == KindOptional {
			// x.?a.b: once a chain is optional, so is what follows.
			n.op = nOptSelect
			return c.optSelect(n, xt)
		}
		switch {
		case xt.Kind == KindMap && compatible(xt.Key, String):
			return xt.Elem
		case xt.Kind == KindDyn:
			return Dyn
		}
		c.fail(n, "type '%s' does not support field selection", xt)
	case nOptSelect:
		return c.optSelect(n, c.check(n.x, sc))
	case nIndex, nOptIndex:
		xt := c.check(n.x, sc)
		it := c.check(n.args[0], sc)
		if xt.Kind == KindOptional {
			// x.?a[0]: once a chain is optional, so is what follows.
			n.op = nOptIndex
			xt = xt.Elem
		}
		opt := n.op == nOptIndex
		var elem *Type
		switch {
		case xt.Kind == KindList && (it.Kind == KindInt || it.Kind == KindDyn):
			elem = xt.Elem
		case xt.Kind == KindMap && compatible(xt.Key, it) && it.Kind != KindOptional:
			elem = xt.Elem
		case xt.Kind == KindDyn && it.Kind != KindOptional:
			elem = Dyn
		default:
			c.noOverload(n, "_[_]", xt, it)
		}
		if opt {
			return OptionalOf(elem)
		}
		return elem
	case nList:
		elem := (*Type)(nil)
		for _, a := range n.args {
			elem = c.joinEntry(n, elem, c.check(a, sc))
		}
		if elem == nil {
			elem = Dyn
		}
		return ListOf(elem)
	case nMap:
		var key, val *Type
		for i := 0; i < len(n.args); i += 2 {
			kt := c.check(n.args[i], sc)
			switch kt.Kind {
			case KindInt, KindUint, KindString, KindBool:
			default:
				c.fail(n.args[i], "unsupported map key type: %s", kt)
			}
			key = c.joinEntry(n, key, kt)
			val = c.joinEntry(n, val, c.check(n.args[i+1], sc))
		}
		if key == nil {
			key, val = Dyn, Dyn
		}
		return MapOf(key, val)
	case nCond:
		ct, a, b := c.check(n.args[0], sc), c.check(n.args[1], sc), c.check(n.args[2], sc)
		if !boolish(ct) || !compatible(a, b) || (a.Kind == KindOptional) != (b.Kind == KindOptional) {
			c.noOverload(n, "_?_:_", ct, a, b)
		}
		return join(a, b)
	case nAnd, nOr:
		fn := "_&&_"
		if n.op == nOr {
			fn = "_||_"
		}
		for _, a := range n.args {
			if t := c.check(a, sc); !boolish(t) {
				c.noOverload(a, fn, t)
			}
		}
		return Bool
	case nNot:
		if t := c.check(n.x, sc); !boolish(t) {
			c.noOverload(n, "!_", t)
		}
		return Bool
	case nNeg:
		t := c.check(n.x, sc)
		if t.Kind != KindInt && t.Kind != KindDouble && t.Kind != KindDyn {
			c.noOverload(n, "-_", t)
		}
		return t
	case nBinary:
		return c.binary(n, c.check(n.args[0], sc), c.check(n.args[1], sc))
	case nHas:
		xt := c.check(n.x.x, sc)
		if xt.Kind != KindMap && xt.Kind != KindDyn {
			c.fail(n, "invalid type for field selection: %s", xt)
		}
		return Bool
	case nComp:
		return c.comprehension(n, sc)
	case nCall:
		return c.call(n, sc)
	}
	c.fail(n, "unsupported expression")
	return nil
}

// constantIn makes x in [literals...] what cel-go makes it: false for an
// empty list, whatever x is (even an error); for a list of ints, uints,
// doubles, strings and bools, a set that holds each number also in the
// other two numeric types it converts to.
func constantIn(n *node) {
	list := n.args[1]
	if list.op != nList || !constant(list) {
		return
	}
	if len(list.args) == 0 {
		*n = node{op: nLit, pos: n.pos, val: false}
		return
	}
	set := map[any]bool{}
	for _, e := range list.args {
		switch v := e.val.(type) {
		case bool, string:
			set[v] = true
		case int64:
			set[v], set[float64(v)] = true, true
			if v >= 0 {
				set[uint64(v)] = true
			}
		case uint64:
			set[v], set[float64(v)] = true, true
			if v <= math.MaxInt64 {
				set[int64(v)] = true
			}
		case float64:
			set[v] = true
			if v == math.Trunc(v) && v > math.MinInt64 && v < math.MaxInt64 {
				set[int64(v)] = true
			}
			if v == math.Trunc(v) && v >= 0 && v < 18446744073709551616.0 {
				set[uint64(v)] = true
			}
		default:
			return
		}
	}
	n.set = set
}

// constant reports whether n is a literal, or a list or map of them.
func constant(n *node) bool {
	switch n.op {
	case nLit:
		return true
	case nList, nMap:
		for _, a := range n.args {
			if !constant(a) {
				return false
			}
		}
		return true
	}
	return false
}

// optSelect is the type of x.?name, x of type xt.
func (c *checker) optSelect(n *node, xt *Type) *Type {
	if xt.Kind == KindOptional {
		xt = xt.Elem
	}
	switch {
	case xt.Kind == KindMap && compatible(xt.Key, String):
		return OptionalOf(xt.Elem)
	case xt.Kind == KindDyn:
		return OptionalOf(Dyn)
	}
	c.fail(n, "type '%s' does not support field selection", xt)
	return nil
}

// joinEntry is the type of a list's elements (or a map's keys or
// values) so far, prev, joined with the next one's: optional values do
// not mix with others.
func (c *checker) joinEntry(n *node, prev, next *Type) *Type {
	if prev == nil {
		return next
	}
	if (prev.Kind == KindOptional) != (next.Kind == KindOptional) {
		c.fail(n, "a list or map that mixes optional values with others is not supported")
	}
	return join(prev, next)
}

func (c *checker) binary(n *node, l, r *Type) *Type {
	fn := "_" + n.name + "_"
	ok := false
	switch n.name {
	case "==", "!=":
		ok = compatible(l, r)
		if ok {
			return Bool
		}
	case "<", "<=", ">", ">=":
		switch {
		case l.Kind == KindDyn || r.Kind == KindDyn:
			ok = l.Kind != KindOptional && r.Kind != KindOptional
		case l.Kind == r.Kind:
			ok = numeric(l) || l.Kind == KindString || l.Kind == KindBytes || l.Kind == KindBool
		}
		if ok {
			return Bool
		}
	case "in":
		fn = "@in"
		switch r.Kind {
		case KindList:
			ok = compatible(l, r.Elem)
			if ok {
				constantIn(n)
			}
		case KindMap:
			ok = compatible(l, r.Key)
		case KindDyn:
			ok = l.Kind != KindOptional
		}
		if ok {
			return Bool
		}
	default:
		allowed := map[string][]Kind{
			"+": {KindInt, KindUint, KindDouble, KindString, KindBytes, KindList},
			"-": {KindInt, KindUint, KindDouble},
			"*": {KindInt, KindUint, KindDouble},
			"/": {KindInt, KindUint, KindDouble},
			"%": {KindInt, KindUint},
		}[n.name]
		kindOK := func(t *Type) bool {
			for _, k := range allowed {
				if t.Kind == k {
					return true
				}
			}
			return false
		}
		switch {
		case l.Kind == KindDyn && r.Kind == KindDyn:
			return Dyn
		case l.Kind == KindDyn && kindOK(r):
			return r
		case r.Kind == KindDyn && kindOK(l):
			return l
		case l.Kind == r.Kind && kindOK(l) && compatible(l, r):
			return join(l, r)
		}
	}
	c.noOverload(n, fn, l, r)
	return nil
}

func (c *checker) comprehension(n *node, sc *scope) *Type {
	rt := c.check(n.x, sc)
	var it *Type
	switch rt.Kind {
	case KindList:
		it = rt.Elem
	case KindMap:
		it = rt.Key
	case KindDyn:
		it = Dyn
	default:
		c.fail(n, "expression of type '%s' cannot be the range of a comprehension (must be list, map, or dynamic)", rt)
	}
	inner := &scope{name: n.iter, typ: it, parent: sc}
	switch n.name {
	case "all", "exists", "exists_one", "filter":
		if t := c.check(n.args[0], inner); !boolish(t) {
			c.fail(n.args[0], "the predicate of %s() is a %s, want a bool", n.name, t)
		}
		if n.name == "filter" {
			return ListOf(it)
		}
		return Bool
	}
	// map(x, t) or map(x, p, t)
	if len(n.args) == 2 {
		if t := c.check(n.args[0], inner); !boolish(t) {
			c.fail(n.args[0], "the predicate of map() is a %s, want a bool", t)
		}
	}
	return ListOf(c.check(n.args[len(n.args)-1], inner))
}

// functions are the global functions of the subset and how many
// arguments each takes.
var functions = map[string]int{
	"size": 1, "int": 1, "uint": 1, "double": 1, "string": 1, "bool": 1, "bytes": 1, "matches": 2,
	"optional.of": 1, "optional.ofNonZeroValue": 1, "optional.none": 0,
}

// methods are the member functions of the subset and how many arguments
// each takes besides its receiver.
var methods = map[string]int{
	"size": 0, "contains": 1, "startsWith": 1, "endsWith": 1, "matches": 1,
	"hasValue": 0, "value": 0, "orValue": 1, "or": 1,
}

func (c *checker) call(n *node, sc *scope) *Type {
	t := c.callType(n, sc)
	if conversions[n.name] && n.x == nil && n.args[0].op == nLit {
		// As cel-go does, a conversion of a literal is computed at load,
		// and refused there when it fails: int("x").
		v, err := function(n, []any{n.args[0].val})
		if err != nil {
			c.fail(n, "%s(): %v", n.name, err)
		}
		*n = node{op: nLit, pos: n.pos, val: v}
	}
	return t
}

var conversions = map[string]bool{"int": true, "uint": true, "double": true, "string": true, "bool": true, "bytes": true}

func (c *checker) callType(n *node, sc *scope) *Type {
	if n.x != nil && n.x.op == nIdent && n.x.name == "optional" {
		if _, shadowed := sc.lookup("optional"); !shadowed {
			if _, declared := c.vars["optional"]; !declared {
				n.name, n.x = "optional."+n.name, nil
			}
		}
	}
	want, known := functions[n.name]
	if n.x != nil {
		want, known = methods[n.name]
	}
	if !known {
		c.fail(n, "undeclared reference to '%s'", n.name)
	}
	var recv *Type
	if n.x != nil {
		recv = c.check(n.x, sc)
	}
	args := make([]*Type, len(n.args))
	for i, a := range n.args {
		args[i] = c.check(a, sc)
	}
	all := args
	if recv != nil {
		all = append([]*Type{recv}, args...)
	}
	if len(args) != want {
		c.noOverload(n, n.name, all...)
	}
	kinds := func(t *Type, ks ...Kind) bool {
		if t.Kind == KindDyn {
			return true
		}
		for _, k := range ks {
			if t.Kind == k {
				return true
			}
		}
		return false
	}
	switch n.name {
	case "size":
		if kinds(all[0], KindString, KindBytes, KindList, KindMap) {
			return Int
		}
	case "contains", "startsWith", "endsWith", "matches":
		if kinds(all[0], KindString) && kinds(all[1], KindString) {
			if n.name == "matches" {
				c.compileRegexp(n)
			}
			return Bool
		}
	case "int":
		if kinds(all[0], KindInt, KindUint, KindDouble, KindString) {
			return Int
		}
	case "uint":
		if kinds(all[0], KindInt, KindUint, KindDouble, KindString) {
			return Uint
		}
	case "double":
		if kinds(all[0], KindInt, KindUint, KindDouble, KindString) {
			return Double
		}
	case "string":
		if kinds(all[0], KindInt, KindUint, KindDouble, KindString, KindBytes, KindBool) {
			return String
		}
	case "bool":
		if kinds(all[0], KindBool, KindString) {
			return Bool
		}
	case "bytes":
		if kinds(all[0], KindBytes, KindString) {
			return Bytes
		}
	case "optional.of", "optional.ofNonZeroValue":
		if all[0].Kind != KindOptional {
			return OptionalOf(all[0])
		}
	case "optional.none":
		return OptionalOf(Dyn)
	case "hasValue":
		if recv.Kind == KindOptional {
			return Bool
		}
	case "value":
		if recv.Kind == KindOptional {
			return recv.Elem
		}
	case "orValue":
		if recv.Kind == KindOptional && compatible(recv.Elem, args[0]) && args[0].Kind != KindOptional {
			return join(recv.Elem, args[0])
		}
	case "or":
		// The argument must be an optional: a dyn one may hold something
		// else, which cel-go then gives as it is and this subset refuses.
		if recv.Kind == KindOptional && args[0].Kind == KindOptional && compatible(recv, args[0]) {
			return join(recv, args[0])
		}
	}
	c.noOverload(n, n.name, all...)
	return nil
}

// compileRegexp compiles, at load, the pattern of a matches() that is a
// literal, and refuses one that is not a regular expression.
func (c *checker) compileRegexp(n *node) {
	pat := n.args[len(n.args)-1]
	s, ok := pat.val.(string)
	if pat.op != nLit || !ok {
		return
	}
	re, err := regexp.Compile(s)
	if err != nil {
		c.fail(pat, "invalid regular expression %q: %v", s, err)
	}
	n.re = re
}
