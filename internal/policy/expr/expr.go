package expr

import (
	"fmt"
)

// Program is an expression that was parsed and type-checked, ready to be
// evaluated any number of times, by any number of goroutines at once.
type Program struct {
	root *node
	// Output is the expression's type: bool, or dyn when only its
	// evaluation will tell.
	Output *Type
}

// Compile parses src and checks it against vars, the variables it may
// read and their types. It refuses, with an *Error, what is outside the
// subset, a name that is not declared, an operator or function applied to
// types it does not take, a literal regular expression that does not
// compile, a conversion of a literal that fails, an expression past the
// limits of size and depth, and one whose result cannot be a bool.
func Compile(src string, vars map[string]*Type) (*Program, error) {
	p, err := compile(src, vars)
	if err != nil {
		return nil, err
	}
	if p.Output.Kind != KindBool && p.Output.Kind != KindDyn {
		return nil, &Error{pos: -1, Msg: fmt.Sprintf("the expression is a %s, want a bool", p.Output)}
	}
	return p, nil
}

// compile is Compile for an expression of any type.
func compile(src string, vars map[string]*Type) (*Program, error) {
	root, err := parse(src)
	if err == nil {
		var t *Type
		if t, err = typeCheck(root, vars); err == nil {
			return &Program{root: root, Output: t}, nil
		}
	}
	if e, ok := err.(*Error); ok {
		e.locate(src)
	}
	return nil, err
}

func typeCheck(root *node, vars map[string]*Type) (t *Type, err error) {
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(*Error)
			if !ok {
				panic(r)
			}
			t, err = nil, e
		}
	}()
	c := &checker{vars: vars}
	return c.check(root, nil), nil
}

// Eval evaluates the program with the variables' values (strings, and for
// a map the JSON values encoding/json decodes into an any, or Go's integer
// types). It reports an error when the expression cannot be evaluated (a
// key that is absent, a value of the wrong type, an overflow, macros that
// would take more than the evaluation's budget of steps, MacroBudget) or
// gives something other than a bool. A panic in the evaluator is an error
// too, never true: a rule that cannot be evaluated fails closed.
func (p *Program) Eval(vars map[string]any) (bool, error) {
	v, err := p.value(vars)
	if err != nil {
		return false, err
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("the expression gave a %s, not a bool", typeName(v))
	}
	return b, nil
}

// value evaluates the program and returns its value as it is, whatever
// its type (Eval's, and for tests that compare it with another
// evaluator's), with a panic turned into an error.
func (p *Program) value(vars map[string]any) (v any, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, fmt.Errorf("evaluating the expression failed (an internal error): %v", r)
		}
	}()
	return (&evaluator{vars: vars}).eval(p.root, nil)
}
