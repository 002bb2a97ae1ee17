package expr

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// frame is the variables of one evaluation: the comprehensions' iteration
// variables, innermost first, then the activation.
type frame struct {
	name   string
	val    any
	parent *frame
}

type evaluator struct {
	vars  map[string]any
	steps int // comprehension bodies evaluated so far (MacroBudget)
}

// MacroBudget bounds the steps of one evaluation's macros (all, exists,
// exists_one, map, filter): each element a comprehension visits is a
// step, so nested macros over long lists (whose cost multiplies) end with
// an error instead of running on. No rule over a caller's claims comes
// near it.
const MacroBudget = 100_000

// errOverBudget is an evaluation's error once its macros pass MacroBudget.
var errOverBudget = fmt.Errorf("the expression's macros take more than %d steps, the budget of one evaluation", MacroBudget)

// step counts one element visited by a comprehension.
func (e *evaluator) step() error {
	e.steps++
	if e.steps > MacroBudget {
		return errOverBudget
	}
	return nil
}

func (e *evaluator) lookup(name string, f *frame) (any, error) {
	for ; f != nil; f = f.parent {
		if f.name == name {
			return f.val, nil
		}
	}
	v, ok := e.vars[name]
	if !ok {
		return nil, fmt.Errorf("no such attribute: %s", name)
	}
	return native(v)
}

func (e *evaluator) eval(n *node, f *frame) (any, error) {
	switch n.op {
	case nLit:
		return n.val, nil
	case nIdent:
		return e.lookup(n.name, f)
	case nSelect:
		x, err := e.eval(n.x, f)
		if err != nil {
			return nil, err
		}
		if !isMap(x) {
			return nil, noOverload("_._", x)
		}
		v, found, err := mapFind(x, n.name)
		if err == nil && !found {
			err = fmt.Errorf("no such key: %s", n.name)
		}
		return v, err
	case nOptSelect:
		x, err := e.eval(n.x, f)
		if err != nil {
			return nil, err
		}
		if o, ok := x.(optional); ok {
			if !o.ok {
				return o, nil
			}
			x = o.v
		}
		if l, ok := x.([]any); ok {
			return nil, fmt.Errorf("unsupported index type 'string' in list (%d elements)", len(l))
		}
		if !isMap(x) {
			// As cel-go: what is neither a map nor a list has no such field.
			return optional{}, nil
		}
		v, found, err := mapFind(x, n.name)
		return optional{v, found}, err
	case nIndex, nOptIndex:
		return e.index(n, f)
	case nList:
		out := make([]any, len(n.args))
		for i, a := range n.args {
			v, err := e.eval(a, f)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case nMap:
		m := &mapValue{}
		for i := 0; i < len(n.args); i += 2 {
			k, err := e.eval(n.args[i], f)
			if err != nil {
				return nil, err
			}
			v, err := e.eval(n.args[i+1], f)
			if err != nil {
				return nil, err
			}
			// The checker let only ints, uints, strings and bools be keys;
			// as in cel-go, a key written twice keeps its last value.
			at := slices.Index(m.keys, k)
			if at < 0 {
				m.keys, m.vals = append(m.keys, k), append(m.vals, v)
			} else {
				m.vals[at] = v
			}
		}
		return m, nil
	case nCond:
		c, err := e.eval(n.args[0], f)
		if err != nil {
			return nil, err
		}
		b, ok := c.(bool)
		if !ok {
			return nil, noOverload("_?_:_", c)
		}
		if b {
			return e.eval(n.args[1], f)
		}
		return e.eval(n.args[2], f)
	case nAnd, nOr:
		// CEL's logic: false (true, for ||) wins over an error in either
		// order; else the first error; else true (false).
		decisive := n.op == nOr
		var firstErr error
		for _, a := range n.args {
			v, err := e.eval(a, f)
			if err == nil {
				b, ok := v.(bool)
				if ok && b == decisive {
					return decisive, nil
				}
				if !ok {
					err = noOverload("logical operator", v)
				}
			}
			if err != nil && firstErr == nil {
				firstErr = err
			}
		}
		if firstErr != nil {
			return nil, firstErr
		}
		return !decisive, nil
	case nNot:
		v, err := e.eval(n.x, f)
		if err != nil {
			return nil, err
		}
		b, ok := v.(bool)
		if !ok {
			return nil, noOverload("!_", v)
		}
		return !b, nil
	case nNeg:
		v, err := e.eval(n.x, f)
		if err != nil {
			return nil, err
		}
		switch x := v.(type) {
		case int64:
			if x == math.MinInt64 {
				return nil, errIntOverflow
			}
			return -x, nil
		case float64:
			return -x, nil
		}
		return nil, noOverload("-_", v)
	case nBinary:
		l, err := e.eval(n.args[0], f)
		if err != nil {
			return nil, err
		}
		if n.set != nil {
			switch l.(type) {
			case bool, string, int64, uint64, float64:
				return n.set[l], nil
			case []byte:
				// cel-go's set cannot hold bytes, and fails to look them up.
				return nil, errors.New("bytes cannot be looked up in a list of literals")
			}
			return false, nil
		}
		r, err := e.eval(n.args[1], f)
		if err != nil {
			return nil, err
		}
		return binary(n.name, l, r)
	case nHas:
		x, err := e.eval(n.x.x, f)
		if err != nil {
			return nil, err
		}
		if l, ok := x.([]any); ok {
			return nil, fmt.Errorf("unsupported index type 'string' in list (%d elements)", len(l))
		}
		if !isMap(x) {
			// As cel-go: what is neither a map nor a list has no such field.
			return false, nil
		}
		_, found, err := mapFind(x, n.x.name)
		return found, err
	case nComp:
		return e.comprehension(n, f)
	case nCall:
		return e.call(n, f)
	}
	return nil, errors.New("unsupported expression")
}

func (e *evaluator) index(n *node, f *frame) (any, error) {
	x, err := e.eval(n.x, f)
	if err != nil {
		return nil, err
	}
	opt := n.op == nOptIndex
	if o, ok := x.(optional); ok && opt {
		if !o.ok {
			// An optional chain that holds nothing reads no index.
			return o, nil
		}
		x = o.v
	}
	i, err := e.eval(n.args[0], f)
	if err != nil {
		return nil, err
	}
	switch i.(type) {
	case string, int64, uint64, bool, float64:
	default:
		// As cel-go: nothing else can be a key or an index.
		return nil, fmt.Errorf("invalid qualifier type: %s", typeName(i))
	}
	switch c := x.(type) {
	case []any:
		at, err := listIndex(i)
		if err != nil {
			return nil, err
		}
		if at < 0 || at >= int64(len(c)) {
			if opt {
				return optional{}, nil
			}
			return nil, fmt.Errorf("index out of bounds: %d", at)
		}
		v, err := native(c[at])
		if opt {
			return optional{v, true}, err
		}
		return v, err
	case map[string]any, *mapValue:
		v, found, err := mapFind(c, i)
		switch {
		case err != nil:
			return nil, err
		case opt:
			return optional{v, found}, nil
		case !found:
			return nil, fmt.Errorf("no such key: %v", i)
		}
		return v, nil
	}
	if opt {
		// As cel-go: what is neither a list nor a map has no such entry.
		return optional{}, nil
	}
	return nil, noOverload("_[_]", x, i)
}

// listIndex is a list's index as CEL reads it: an int, or a uint or a
// double that is one exactly.
func listIndex(i any) (int64, error) {
	switch x := i.(type) {
	case int64:
		return x, nil
	case uint64:
		if x <= math.MaxInt64 {
			return int64(x), nil
		}
	case float64:
		if t := math.Trunc(x); t == x && x >= math.MinInt64 && x < math.MaxInt64 {
			return int64(x), nil
		}
	default:
		return 0, fmt.Errorf("unsupported index type '%s' in list", typeName(i))
	}
	return 0, fmt.Errorf("unsupported index value %v in list", i)
}

func (e *evaluator) comprehension(n *node, f *frame) (any, error) {
	r, err := e.eval(n.x, f)
	if err != nil {
		return nil, err
	}
	var items []any
	switch c := r.(type) {
	case []any:
		items = make([]any, len(c))
		for i, v := range c {
			if items[i], err = native(v); err != nil {
				return nil, err
			}
		}
	case map[string]any, *mapValue:
		items = mapKeys(c)
	default:
		return nil, noOverload(n.name, r)
	}
	inner := &frame{name: n.iter, parent: f}
	pred := func(a *node) (bool, error) {
		if err := e.step(); err != nil {
			return false, err
		}
		v, err := e.eval(a, inner)
		if err != nil {
			return false, err
		}
		b, ok := v.(bool)
		if !ok {
			return false, noOverload(n.name, v)
		}
		return b, nil
	}
	switch n.name {
	case "all", "exists":
		decisive := n.name == "exists"
		var firstErr error
		for _, it := range items {
			inner.val = it
			b, err := pred(n.args[0])
			if err == nil && b == decisive {
				return decisive, nil
			}
			if err != nil && firstErr == nil {
				firstErr = err
			}
		}
		if firstErr != nil {
			return nil, firstErr
		}
		return !decisive, nil
	case "exists_one":
		count := 0
		for _, it := range items {
			inner.val = it
			b, err := pred(n.args[0])
			if err != nil {
				return nil, err
			}
			if b {
				count++
			}
		}
		return count == 1, nil
	case "filter":
		out := []any{}
		for _, it := range items {
			inner.val = it
			b, err := pred(n.args[0])
			if err != nil {
				return nil, err
			}
			if b {
				out = append(out, it)
			}
		}
		return out, nil
	}
	out := []any{}
	for _, it := range items {
		inner.val = it
		if err := e.step(); err != nil {
			return nil, err
		}
		if len(n.args) == 2 {
			b, err := pred(n.args[0])
			if err != nil {
				return nil, err
			}
			if !b {
				continue
			}
		}
		v, err := e.eval(n.args[len(n.args)-1], inner)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func binary(op string, l, r any) (any, error) {
	fn := "_" + op + "_"
	switch op {
	case "==":
		return equal(l, r), nil
	case "!=":
		return !equal(l, r), nil
	case "<", "<=", ">", ">=":
		if orderable(l) && (isNaN(l) || isNaN(r)) {
			// As cel-go: NaN is neither less, equal nor greater, whatever
			// it meets.
			return false, nil
		}
		c, err := compare(fn, l, r)
		if err != nil {
			return nil, err
		}
		switch op {
		case "<":
			return c < 0, nil
		case "<=":
			return c <= 0, nil
		case ">":
			return c > 0, nil
		}
		return c >= 0, nil
	case "in":
		switch c := r.(type) {
		case []any:
			for _, v := range c {
				v, err := native(v)
				if err != nil {
					return nil, err
				}
				if equal(l, v) {
					return true, nil
				}
			}
			return false, nil
		case map[string]any, *mapValue:
			_, found, err := mapFind(c, l)
			return found, err
		}
		return nil, noOverload("@in", l, r)
	}
	switch a := l.(type) {
	case int64:
		if b, ok := r.(int64); ok {
			return intOp(op, a, b)
		}
	case uint64:
		if b, ok := r.(uint64); ok {
			return uintOp(op, a, b)
		}
	case float64:
		if b, ok := r.(float64); ok {
			switch op {
			case "+":
				return a + b, nil
			case "-":
				return a - b, nil
			case "*":
				return a * b, nil
			case "/":
				return a / b, nil
			}
		}
	case string:
		if b, ok := r.(string); ok && op == "+" {
			return a + b, nil
		}
	case []byte:
		if b, ok := r.([]byte); ok && op == "+" {
			return append(append([]byte{}, a...), b...), nil
		}
	case []any:
		if b, ok := r.([]any); ok && op == "+" {
			out := make([]any, 0, len(a)+len(b))
			return append(append(out, a...), b...), nil
		}
	}
	return nil, noOverload(fn, l, r)
}

func intOp(op string, a, b int64) (any, error) {
	switch op {
	case "+":
		s := a + b
		if (s > a) != (b > 0) {
			return nil, errIntOverflow
		}
		return s, nil
	case "-":
		d := a - b
		if (d < a) != (b > 0) {
			return nil, errIntOverflow
		}
		return d, nil
	case "*":
		if a == 0 || b == 0 {
			return int64(0), nil
		}
		p := a * b
		if (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) || p/b != a {
			return nil, errIntOverflow
		}
		return p, nil
	case "/", "%":
		if b == 0 {
			if op == "/" {
				return nil, errDivZero
			}
			return nil, errModZero
		}
		if a == math.MinInt64 && b == -1 {
			return nil, errIntOverflow
		}
		if op == "/" {
			return a / b, nil
		}
		return a % b, nil
	}
	return nil, noOverload("_"+op+"_", a, b)
}

func uintOp(op string, a, b uint64) (any, error) {
	switch op {
	case "+":
		s, carry := bits.Add64(a, b, 0)
		if carry != 0 {
			return nil, errUintOverflow
		}
		return s, nil
	case "-":
		if b > a {
			return nil, errUintOverflow
		}
		return a - b, nil
	case "*":
		hi, lo := bits.Mul64(a, b)
		if hi != 0 {
			return nil, errUintOverflow
		}
		return lo, nil
	case "/", "%":
		if b == 0 {
			if op == "/" {
				return nil, errDivZero
			}
			return nil, errModZero
		}
		if op == "/" {
			return a / b, nil
		}
		return a % b, nil
	}
	return nil, noOverload("_"+op+"_", a, b)
}

func (e *evaluator) call(n *node, f *frame) (any, error) {
	// or and orValue evaluate their argument only when the receiver
	// holds nothing.
	if n.name == "or" || n.name == "orValue" {
		recv, err := e.eval(n.x, f)
		if err != nil {
			return nil, err
		}
		o, ok := recv.(optional)
		if !ok {
			return nil, noOverload(n.name, recv)
		}
		if o.ok {
			if n.name == "or" {
				return o, nil
			}
			return o.v, nil
		}
		return e.eval(n.args[0], f)
	}
	args := make([]any, 0, len(n.args)+1)
	if n.x != nil {
		v, err := e.eval(n.x, f)
		if err != nil {
			return nil, err
		}
		args = append(args, v)
	}
	for _, a := range n.args {
		v, err := e.eval(a, f)
		if err != nil {
			return nil, err
		}
		args = append(args, v)
	}
	return function(n, args)
}

func function(n *node, args []any) (any, error) {
	a := args[0:]
	switch n.name {
	case "optional.none":
		return optional{}, nil
	case "size":
		switch x := a[0].(type) {
		case string:
			return int64(utf8.RuneCountInString(x)), nil
		case []byte:
			return int64(len(x)), nil
		case []any:
			return int64(len(x)), nil
		case map[string]any, *mapValue:
			return int64(mapLen(x)), nil
		}
	case "contains", "startsWith", "endsWith", "matches":
		s, ok1 := a[0].(string)
		t, ok2 := a[1].(string)
		if !ok1 || !ok2 {
			break
		}
		switch n.name {
		case "contains":
			return strings.Contains(s, t), nil
		case "startsWith":
			return strings.HasPrefix(s, t), nil
		case "endsWith":
			return strings.HasSuffix(s, t), nil
		}
		re := n.re
		if re == nil {
			var err error
			if re, err = regexp.Compile(t); err != nil {
				return nil, err
			}
		}
		return re.MatchString(s), nil
	case "int":
		switch x := a[0].(type) {
		case int64:
			return x, nil
		case uint64:
			if x > math.MaxInt64 {
				return nil, errIntOverflow
			}
			return int64(x), nil
		case float64:
			if math.IsInf(x, 0) || math.IsNaN(x) || x <= math.MinInt64 || x >= math.MaxInt64 {
				return nil, errIntOverflow
			}
			return int64(x), nil
		case string:
			i, err := strconv.ParseInt(x, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("cannot convert %q to an int", x)
			}
			return i, nil
		}
	case "uint":
		switch x := a[0].(type) {
		case int64:
			if x < 0 {
				return nil, errUintOverflow
			}
			return uint64(x), nil
		case uint64:
			return x, nil
		case float64:
			if math.IsInf(x, 0) || math.IsNaN(x) || x < 0 || x >= 18446744073709551616.0 {
				return nil, errUintOverflow
			}
			return uint64(x), nil
		case string:
			u, err := strconv.ParseUint(x, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("cannot convert %q to a uint", x)
			}
			return u, nil
		}
	case "double":
		switch x := a[0].(type) {
		case int64:
			return float64(x), nil
		case uint64:
			return float64(x), nil
		case float64:
			return x, nil
		case string:
			d, err := strconv.ParseFloat(x, 64)
			if err != nil {
				return nil, fmt.Errorf("cannot convert %q to a double", x)
			}
			return d, nil
		}
	case "string":
		switch x := a[0].(type) {
		case int64, uint64:
			return fmt.Sprintf("%d", x), nil
		case float64:
			return fmt.Sprintf("%g", x), nil
		case string:
			return x, nil
		case []byte:
			if !utf8.Valid(x) {
				return nil, errors.New("invalid UTF-8 in bytes, cannot convert to string")
			}
			return string(x), nil
		case bool:
			return strconv.FormatBool(x), nil
		}
	case "bool":
		switch x := a[0].(type) {
		case bool:
			return x, nil
		case string:
			b, err := strconv.ParseBool(x)
			if err != nil {
				return nil, fmt.Errorf("cannot convert %q to a bool", x)
			}
			return b, nil
		}
	case "bytes":
		switch x := a[0].(type) {
		case []byte:
			return x, nil
		case string:
			return []byte(x), nil
		}
	case "optional.of":
		return optional{a[0], true}, nil
	case "optional.ofNonZeroValue":
		return optional{a[0], !isZero(a[0])}, nil
	case "hasValue":
		if o, ok := a[0].(optional); ok {
			return o.ok, nil
		}
	case "value":
		if o, ok := a[0].(optional); ok {
			if !o.ok {
				return nil, errors.New("optional.none() dereference")
			}
			return o.v, nil
		}
	}
	return nil, noOverload(n.name, a...)
}

// isZero reports whether v is its type's zero value, as
// optional.ofNonZeroValue reads it.
func isZero(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case bool:
		return !x
	case int64:
		return x == 0
	case uint64:
		return x == 0
	case float64:
		return x == 0
	case string:
		return x == ""
	case []byte:
		return len(x) == 0
	case []any:
		return len(x) == 0
	case map[string]any, *mapValue:
		return mapLen(x) == 0
	case optional:
		return !x.ok
	}
	return false
}
