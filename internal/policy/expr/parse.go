package expr

import (
	"fmt"
	"math"
	"regexp"
)

// Limits on what an expression may be, so that a hostile config cannot
// exhaust the stack or the memory of the trunk that loads it.
const (
	maxSource = 100 << 10 // bytes of source: an allow-list of a few thousand names fits
	maxDepth  = 100       // nesting of parentheses, calls, lists, maps and unary operators
	maxNodes  = 10000     // nodes of the parsed expression
)

type nodeOp int

const (
	nLit       nodeOp = iota
	nIdent            // name
	nSelect           // x.name
	nOptSelect        // x.?name
	nIndex            // x[args[0]]
	nOptIndex         // x[?args[0]]
	nCall             // name(args), or x.name(args) when x is set
	nList             // [args...]
	nMap              // {args[0]: args[1], ...}
	nCond             // args[0] ? args[1] : args[2]
	nAnd              // args[0] && args[1] && ...
	nOr               // args[0] || args[1] || ...
	nNot              // !x
	nNeg              // -x
	nBinary           // args[0] name args[1]: + - * / % == != < <= > >= in
	nHas              // has(x.name)
	nComp             // x.name(iter, args...): all, exists, exists_one, map, filter
)

type node struct {
	op   nodeOp
	pos  int
	val  any    // nLit
	name string // the variable, field, function, operator or macro
	iter string // nComp: the iteration variable
	x    *node
	args []*node
	re   *regexp.Regexp // a matches() whose pattern is a literal, compiled at load
	set  map[any]bool   // x in [literals...]: the set of them (see constantIn)
	typ  *Type          // what the checker found
}

// keywords are the words that are not identifiers.
var keywords = map[string]bool{"in": true, "true": true, "false": true, "null": true}

type parser struct {
	toks  []token
	i     int
	depth int
	nodes int
}

func parse(src string) (n *node, err error) {
	if len(src) > maxSource {
		return nil, &Error{pos: -1, Msg: fmt.Sprintf("the expression is longer than %d bytes", maxSource)}
	}
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(*Error)
			if !ok {
				panic(r)
			}
			n, err = nil, e
		}
	}()
	n = p.expr()
	if t := p.peek(); t.kind != tEOF {
		p.fail(t.pos, fmt.Sprintf("extraneous input %s", describe(t)))
	}
	return n, nil
}

func describe(t token) string {
	switch t.kind {
	case tEOF:
		return "<EOF>"
	case tPunct, tIdent:
		return "'" + t.text + "'"
	default:
		return "literal"
	}
}

func (p *parser) fail(pos int, msg string) {
	panic(syntaxErr(pos, msg).(*Error))
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func (p *parser) is(punct string) bool {
	t := p.toks[p.i]
	return t.kind == tPunct && t.text == punct
}

func (p *parser) accept(punct string) bool {
	if p.is(punct) {
		p.i++
		return true
	}
	return false
}

func (p *parser) expect(punct string) {
	if !p.accept(punct) {
		t := p.peek()
		p.fail(t.pos, fmt.Sprintf("mismatched input %s expecting '%s'", describe(t), punct))
	}
}

func (p *parser) mk(op nodeOp, pos int) *node {
	p.nodes++
	if p.nodes > maxNodes {
		p.fail(pos, fmt.Sprintf("the expression has more than %d parts", maxNodes))
	}
	return &node{op: op, pos: pos}
}

func (p *parser) enter(pos int) {
	p.depth++
	if p.depth > maxDepth {
		p.fail(pos, fmt.Sprintf("the expression nests deeper than %d", maxDepth))
	}
}

func (p *parser) leave() { p.depth-- }

func (p *parser) expr() *node {
	p.enter(p.peek().pos)
	defer p.leave()
	c := p.or()
	if !p.is("?") {
		return c
	}
	n := p.mk(nCond, p.next().pos)
	a := p.or()
	p.expect(":")
	b := p.expr()
	n.args = []*node{c, a, b}
	return n
}

func (p *parser) or() *node {
	first := p.and()
	if !p.is("||") {
		return first
	}
	n := p.mk(nOr, p.peek().pos)
	n.args = []*node{first}
	for p.accept("||") {
		n.args = append(n.args, p.and())
	}
	return n
}

func (p *parser) and() *node {
	first := p.relation()
	if !p.is("&&") {
		return first
	}
	n := p.mk(nAnd, p.peek().pos)
	n.args = []*node{first}
	for p.accept("&&") {
		n.args = append(n.args, p.relation())
	}
	return n
}

func (p *parser) binaryLoop(operand func() *node, ops ...string) *node {
	l := operand()
	for {
		t := p.peek()
		matched := false
		if t.kind == tPunct {
			for _, o := range ops {
				matched = matched || t.text == o
			}
		} else if t.kind == tIdent && t.text == "in" {
			for _, o := range ops {
				matched = matched || o == "in"
			}
		}
		if !matched {
			return l
		}
		p.next()
		n := p.mk(nBinary, t.pos)
		n.name = t.text
		n.args = []*node{l, operand()}
		l = n
	}
}

func (p *parser) relation() *node {
	return p.binaryLoop(p.calc, "<", "<=", ">", ">=", "==", "!=", "in")
}

func (p *parser) calc() *node { return p.binaryLoop(p.product, "+", "-") }

func (p *parser) product() *node { return p.binaryLoop(p.unary, "*", "/", "%") }

// unary reads a run of ! or of - before a member; as in CEL's parser, an
// even run cancels out, and a - right before a number is the number's sign.
func (p *parser) unary() *node {
	t := p.peek()
	if t.kind != tPunct || (t.text != "!" && t.text != "-") {
		return p.member()
	}
	p.enter(t.pos)
	defer p.leave()
	count := 0
	for p.is(t.text) {
		if t.text == "-" {
			if k := p.toks[p.i+1].kind; k == tInt || k == tDouble {
				break
			}
		}
		p.next()
		count++
	}
	operand := p.member()
	if count%2 == 0 {
		return operand
	}
	op := nNot
	if t.text == "-" {
		op = nNeg
	}
	n := p.mk(op, t.pos)
	n.x = operand
	return n
}

func (p *parser) member() *node {
	n := p.primary()
	for {
		t := p.peek()
		switch {
		case p.accept("."):
			opt := p.accept("?")
			id := p.next()
			if id.kind != tIdent || keywords[id.text] {
				p.fail(id.pos, fmt.Sprintf("no viable alternative at input '.%s'", describe(id)))
			}
			if !opt && p.is("(") {
				p.next()
				n = p.call(n, id)
				continue
			}
			op := nSelect
			if opt {
				op = nOptSelect
			}
			s := p.mk(op, t.pos)
			s.x, s.name = n, id.text
			n = s
		case p.accept("["):
			p.enter(t.pos)
			op := nIndex
			if p.accept("?") {
				op = nOptIndex
			}
			s := p.mk(op, t.pos)
			s.x = n
			s.args = []*node{p.expr()}
			p.expect("]")
			p.leave()
			n = s
		default:
			return n
		}
	}
}

// call reads the arguments of a call (its "(" read) of a global function
// (target nil) or of a method, and expands CEL's macros.
func (p *parser) call(target *node, id token) *node {
	p.enter(id.pos)
	defer p.leave()
	var args []*node
	if !p.accept(")") {
		for {
			args = append(args, p.expr())
			if p.accept(")") {
				break
			}
			p.expect(",")
		}
	}
	if target == nil && id.text == "has" && len(args) == 1 {
		if args[0].op != nSelect {
			p.fail(id.pos, "invalid argument to has() macro")
		}
		n := p.mk(nHas, id.pos)
		n.x = args[0]
		return n
	}
	if target != nil {
		switch {
		case len(args) == 2 && (id.text == "all" || id.text == "exists" || id.text == "exists_one" || id.text == "map" || id.text == "filter"),
			len(args) == 3 && id.text == "map":
			if args[0].op != nIdent {
				p.fail(args[0].pos, "argument is not an identifier")
			}
			if args[0].name == "__result__" {
				p.fail(args[0].pos, "iteration variable overwrites accumulator variable")
			}
			n := p.mk(nComp, id.pos)
			n.name, n.iter, n.x, n.args = id.text, args[0].name, target, args[1:]
			return n
		}
	}
	n := p.mk(nCall, id.pos)
	n.name, n.x, n.args = id.text, target, args
	return n
}

func (p *parser) primary() *node {
	t := p.next()
	switch t.kind {
	case tIdent:
		switch t.text {
		case "true", "false":
			n := p.mk(nLit, t.pos)
			n.val = t.text == "true"
			return n
		case "null":
			n := p.mk(nLit, t.pos)
			return n
		case "in":
			p.fail(t.pos, "mismatched input 'in'")
		}
		if p.accept("(") {
			return p.call(nil, t)
		}
		if p.is("{") {
			p.fail(t.pos, "message construction is not supported")
		}
		n := p.mk(nIdent, t.pos)
		n.name = t.text
		return n
	case tInt, tDouble:
		return p.number(t, false)
	case tUint:
		n := p.mk(nLit, t.pos)
		n.val = t.u
		return n
	case tString:
		n := p.mk(nLit, t.pos)
		n.val = t.text
		return n
	case tBytes:
		n := p.mk(nLit, t.pos)
		n.val = []byte(t.text)
		return n
	case tPunct:
		switch t.text {
		case "-":
			return p.number(p.next(), true)
		case "(":
			n := p.expr()
			p.expect(")")
			return n
		case "[":
			p.enter(t.pos)
			defer p.leave()
			n := p.mk(nList, t.pos)
			n.args = p.elements("]", false)
			return n
		case "{":
			p.enter(t.pos)
			defer p.leave()
			n := p.mk(nMap, t.pos)
			n.args = p.elements("}", true)
			return n
		case ".":
			p.fail(t.pos, "a name from the root scope (a leading '.') is not supported")
		}
	}
	p.fail(t.pos, fmt.Sprintf("mismatched input %s", describe(t)))
	return nil
}

// number is an int or double literal, negative when neg.
func (p *parser) number(t token, neg bool) *node {
	n := p.mk(nLit, t.pos)
	switch {
	case t.kind == tDouble && neg:
		n.val = -t.f
	case t.kind == tDouble:
		n.val = t.f
	case t.kind == tInt && neg && t.u <= 1<<63:
		n.val = int64(-t.u)
	case t.kind == tInt && t.u <= math.MaxInt64:
		n.val = int64(t.u)
	case t.kind == tInt:
		p.fail(t.pos, fmt.Sprintf("invalid int literal %s", t.text))
	default:
		p.fail(t.pos, "mismatched input")
	}
	return n
}

// elements reads the elements of a list, or the entries of a map (key,
// value, key, value...) up to end, a trailing comma allowed.
func (p *parser) elements(end string, entries bool) []*node {
	var out []*node
	for !p.accept(end) {
		if p.is("?") {
			p.fail(p.peek().pos, "optional entries of a list or map are not supported")
		}
		out = append(out, p.expr())
		if entries {
			p.expect(":")
			out = append(out, p.expr())
		}
		if p.accept(end) {
			break
		}
		p.expect(",")
	}
	return out
}
