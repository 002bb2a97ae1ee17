package expr

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"sort"
)

// The values an expression computes with: nil (null), bool, int64,
// uint64, float64, string, []byte, []any (a list), map[string]any (a map
// from the caller, JSON's) or *mapValue (a map literal), and optional.
// Values from the caller (the elements of its lists and maps) are brought
// to these by native when they are read.

// optional is a CEL optional: a value, or none.
type optional struct {
	v  any
	ok bool
}

// mapValue is a map literal, its entries in the order written.
type mapValue struct {
	keys, vals []any
}

var (
	errIntOverflow  = errors.New("integer overflow")
	errUintOverflow = errors.New("unsigned integer overflow")
	errDivZero      = errors.New("division by zero")
	errModZero      = errors.New("modulus by zero")
)

// native brings a value from the caller to one of the subset's: the
// integer and float types of Go to int64, uint64 and float64.
func native(v any) (any, error) {
	switch x := v.(type) {
	case nil, bool, int64, uint64, float64, string, []byte, []any, map[string]any, *mapValue, optional:
		return v, nil
	case int:
		return int64(x), nil
	case int8:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case uint:
		return uint64(x), nil
	case uint8:
		return uint64(x), nil
	case uint16:
		return uint64(x), nil
	case uint32:
		return uint64(x), nil
	case float32:
		return float64(x), nil
	case []string:
		out := make([]any, len(x))
		for i, s := range x {
			out[i] = s
		}
		return out, nil
	}
	return nil, fmt.Errorf("unsupported type conversion from %T", v)
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null_type"
	case bool:
		return "bool"
	case int64:
		return "int"
	case uint64:
		return "uint"
	case float64:
		return "double"
	case string:
		return "string"
	case []byte:
		return "bytes"
	case []any:
		return "list"
	case map[string]any, *mapValue:
		return "map"
	case optional:
		return "optional_type"
	}
	return fmt.Sprintf("%T", v)
}

func noOverload(fn string, vals ...any) error {
	names := ""
	for i, v := range vals {
		if i > 0 {
			names += ", "
		}
		names += typeName(v)
	}
	return fmt.Errorf("no such overload: %s(%s)", fn, names)
}

// mapFind looks key up in a map: with CEL's numeric keys, an int, a uint
// and an integral double of the same value find the same entry.
func mapFind(m any, key any) (any, bool, error) {
	switch m := m.(type) {
	case map[string]any:
		s, ok := key.(string)
		if !ok {
			return nil, false, nil
		}
		v, found := m[s]
		if !found {
			return nil, false, nil
		}
		v, err := native(v)
		return v, true, err
	case *mapValue:
		for i, k := range m.keys {
			if k == key {
				return m.vals[i], true, nil
			}
		}
		for i, k := range m.keys {
			if keyEqual(k, key) {
				return m.vals[i], true, nil
			}
		}
		return nil, false, nil
	}
	return nil, false, noOverload("_[_]", m, key)
}

func keyEqual(k, key any) bool {
	switch k.(type) {
	case int64, uint64:
		switch key.(type) {
		case int64, uint64, float64:
			return equal(k, key)
		}
		return false
	}
	return k == key
}

// mapKeys lists a map's keys; a caller's map in sorted order, so that
// what an expression computes does not vary from run to run.
func mapKeys(m any) []any {
	switch m := m.(type) {
	case map[string]any:
		ks := make([]string, 0, len(m))
		for k := range m {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		out := make([]any, len(ks))
		for i, k := range ks {
			out[i] = k
		}
		return out
	case *mapValue:
		return m.keys
	}
	return nil
}

func mapLen(m any) int {
	switch m := m.(type) {
	case map[string]any:
		return len(m)
	case *mapValue:
		return len(m.keys)
	}
	return 0
}

func isMap(v any) bool {
	switch v.(type) {
	case map[string]any, *mapValue:
		return true
	}
	return false
}

// equal is CEL's equality: values of different types are unequal, except
// numbers, which compare by value across int, uint and double; NaN equals
// nothing; lists and maps compare element by element.
func equal(a, b any) bool {
	if na, ok := asNumber(a); ok {
		nb, ok := asNumber(b)
		return ok && na.cmp(nb) == 0
	}
	switch a := a.(type) {
	case nil:
		return b == nil
	case bool, string:
		return a == b
	case []byte:
		bb, ok := b.([]byte)
		return ok && bytes.Equal(a, bb)
	case []any:
		bl, ok := b.([]any)
		if !ok || len(a) != len(bl) {
			return false
		}
		for i := range a {
			x, err1 := native(a[i])
			y, err2 := native(bl[i])
			if err1 != nil || err2 != nil || !equal(x, y) {
				return false
			}
		}
		return true
	case map[string]any, *mapValue:
		if !isMap(b) || mapLen(a) != mapLen(b) {
			return false
		}
		for _, k := range mapKeys(a) {
			x, _, err1 := mapFind(a, k)
			y, found, err2 := mapFind(b, k)
			if !found || err1 != nil || err2 != nil || !equal(x, y) {
				return false
			}
		}
		return true
	case optional:
		bo, ok := b.(optional)
		return ok && a.ok == bo.ok && (!a.ok || equal(a.v, bo.v))
	}
	return false
}

// number is an int, uint or double, for comparing across the three.
type number struct {
	kind Kind
	i    int64
	u    uint64
	f    float64
}

func asNumber(v any) (number, bool) {
	switch x := v.(type) {
	case int64:
		return number{kind: KindInt, i: x}, true
	case uint64:
		return number{kind: KindUint, u: x}, true
	case float64:
		return number{kind: KindDouble, f: x}, true
	}
	return number{}, false
}

// cmp orders two numbers by value: -1, 0 or 1, and 2 when either is NaN.
func (a number) cmp(b number) int {
	if a.kind == KindDouble && math.IsNaN(a.f) || b.kind == KindDouble && math.IsNaN(b.f) {
		return 2
	}
	if a.kind == KindDouble || b.kind == KindDouble {
		if a.kind != KindDouble {
			return -b.cmp(a)
		}
		// As cel-go does, an int or uint meets a double as a double.
		switch b.kind {
		case KindDouble:
			return cmp3(a.f, b.f)
		case KindInt:
			switch {
			case a.f < math.MinInt64:
				return -1
			case a.f > math.MaxInt64:
				return 1
			}
			return cmp3(a.f, float64(b.i))
		default:
			switch {
			case a.f < 0:
				return -1
			case a.f > math.MaxUint64:
				return 1
			}
			return cmp3(a.f, float64(b.u))
		}
	}
	switch {
	case a.kind == KindInt && b.kind == KindInt:
		return cmp3(a.i, b.i)
	case a.kind == KindUint && b.kind == KindUint:
		return cmp3(a.u, b.u)
	case a.kind == KindInt:
		if a.i < 0 {
			return -1
		}
		return cmp3(uint64(a.i), b.u)
	default:
		return -b.cmp(a)
	}
}

func cmp3[T int64 | uint64 | float64 | string](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// orderable reports whether v is of a type < and > take.
func orderable(v any) bool {
	switch v.(type) {
	case bool, int64, uint64, float64, string, []byte:
		return true
	}
	return false
}

func isNaN(v any) bool {
	f, ok := v.(float64)
	return ok && math.IsNaN(f)
}

// compare orders a and b for < <= > >=: numbers across their types,
// strings, bytes and bools among their own.
func compare(fn string, a, b any) (int, error) {
	if na, ok := asNumber(a); ok {
		if nb, ok := asNumber(b); ok {
			c := na.cmp(nb)
			if c == 2 {
				return 0, errors.New("NaN values cannot be ordered")
			}
			return c, nil
		}
		return 0, noOverload(fn, a, b)
	}
	switch x := a.(type) {
	case string:
		if y, ok := b.(string); ok {
			return cmp3(x, y), nil
		}
	case []byte:
		if y, ok := b.([]byte); ok {
			return bytes.Compare(x, y), nil
		}
	case bool:
		if y, ok := b.(bool); ok {
			switch {
			case x == y:
				return 0, nil
			case !x:
				return -1, nil
			}
			return 1, nil
		}
	}
	return 0, noOverload(fn, a, b)
}
