package policy

import "github.com/mcptrunk/mcptrunk/internal/policy/expr"

// Role is a CEL expression over the caller alone (subject, claims,
// profile) that says who holds a role: trunk.policy.operators, the callers
// who may read the operators' pages of serve --http. A nil *Role matches
// no one.
type Role struct {
	src string
	prg *expr.Program
}

// callerVariables are what a role may read: the caller, no item.
var callerVariables = map[string]*expr.Type{
	"subject": expr.String,
	"claims":  expr.MapOf(expr.String, expr.Dyn),
	"profile": expr.String,
}

// CompileRole checks and compiles a role's expression; "" compiles to nil.
// The error says what is wrong with the expression, for the caller to
// name the field.
func CompileRole(src string) (*Role, error) {
	if src == "" {
		return nil, nil
	}
	prg, err := expr.Compile(src, callerVariables)
	if err != nil {
		return nil, err
	}
	return &Role{src: src, prg: prg}, nil
}

// Holds reports whether the caller holds the role. It fails closed: an
// expression that cannot be evaluated (a claim it reads is missing, a
// value of the wrong type) does not match, and the error says why.
func (r *Role) Holds(c Caller) (bool, error) {
	if r == nil {
		return false, nil
	}
	claims := c.Claims
	if claims == nil {
		claims = map[string]any{}
	}
	return r.prg.Eval(map[string]any{"subject": c.Subject, "claims": claims, "profile": c.Profile})
}

// String is the role's expression.
func (r *Role) String() string {
	if r == nil {
		return ""
	}
	return r.src
}
