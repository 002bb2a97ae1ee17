package expr

// Kind is a kind of CEL type.
type Kind int

// The kinds of CEL type the subset knows.
const (
	KindDyn Kind = iota
	KindBool
	KindInt
	KindUint
	KindDouble
	KindString
	KindBytes
	KindNull
	KindList
	KindMap
	KindOptional
)

// Type is a CEL type: for a list its element type (Elem), for a map its
// key and value types, for an optional the type it may hold (Elem).
type Type struct {
	Kind Kind
	Key  *Type
	Elem *Type
}

// The types a variable may be declared with.
var (
	Dyn    = &Type{Kind: KindDyn}
	Bool   = &Type{Kind: KindBool}
	Int    = &Type{Kind: KindInt}
	Uint   = &Type{Kind: KindUint}
	Double = &Type{Kind: KindDouble}
	String = &Type{Kind: KindString}
	Bytes  = &Type{Kind: KindBytes}
	Null   = &Type{Kind: KindNull}
)

// ListOf is the type list(elem).
func ListOf(elem *Type) *Type { return &Type{Kind: KindList, Elem: elem} }

// MapOf is the type map(key, value).
func MapOf(key, value *Type) *Type { return &Type{Kind: KindMap, Key: key, Elem: value} }

// OptionalOf is the type optional_type(elem).
func OptionalOf(elem *Type) *Type { return &Type{Kind: KindOptional, Elem: elem} }

func (t *Type) String() string {
	switch t.Kind {
	case KindBool:
		return "bool"
	case KindInt:
		return "int"
	case KindUint:
		return "uint"
	case KindDouble:
		return "double"
	case KindString:
		return "string"
	case KindBytes:
		return "bytes"
	case KindNull:
		return "null_type"
	case KindList:
		return "list(" + t.Elem.String() + ")"
	case KindMap:
		return "map(" + t.Key.String() + ", " + t.Elem.String() + ")"
	case KindOptional:
		return "optional_type(" + t.Elem.String() + ")"
	}
	return "dyn"
}

// same reports whether a and b are the same type.
func same(a, b *Type) bool {
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case KindList, KindOptional:
		return same(a.Elem, b.Elem)
	case KindMap:
		return same(a.Key, b.Key) && same(a.Elem, b.Elem)
	}
	return true
}

// compatible reports whether a value of type a may meet one of type b
// where CEL wants the two alike: dyn is compatible with everything, and
// null with nothing else but itself.
func compatible(a, b *Type) bool {
	if a.Kind == KindDyn || b.Kind == KindDyn {
		return true
	}
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case KindList, KindOptional:
		return compatible(a.Elem, b.Elem)
	case KindMap:
		return compatible(a.Key, b.Key) && compatible(a.Elem, b.Elem)
	}
	return true
}

// join is the type of a value that is either an a or a b: dyn unless
// they are alike.
func join(a, b *Type) *Type {
	switch {
	case same(a, b):
		return a
	case a.Kind == b.Kind && a.Kind == KindList:
		return ListOf(join(a.Elem, b.Elem))
	case a.Kind == b.Kind && a.Kind == KindOptional:
		return OptionalOf(join(a.Elem, b.Elem))
	case a.Kind == b.Kind && a.Kind == KindMap:
		return MapOf(join(a.Key, b.Key), join(a.Elem, b.Elem))
	}
	return Dyn
}

func numeric(t *Type) bool {
	return t.Kind == KindInt || t.Kind == KindUint || t.Kind == KindDouble
}
