package policy

import "github.com/google/cel-go/cel"

// Role is a CEL expression over the caller alone (subject, claims,
// profile) that says who holds a role: trunk.policy.operators, the callers
// who may read the operators' pages of serve --http. A nil *Role matches
// no one.
type Role struct {
	src string
	prg cel.Program
}

// callerVariables are what a role may read: the caller, no item.
var callerVariables = []cel.EnvOption{
	cel.OptionalTypes(),
	cel.Variable("subject", cel.StringType),
	cel.Variable("claims", cel.MapType(cel.StringType, cel.DynType)),
	cel.Variable("profile", cel.StringType),
}

// CompileRole checks and compiles a role's expression; "" compiles to nil.
// The error says what is wrong with the expression, for the caller to
// name the field.
func CompileRole(src string) (*Role, error) {
	if src == "" {
		return nil, nil
	}
	env, err := cel.NewEnv(callerVariables...)
	if err != nil {
		return nil, err
	}
	prg, err := compileBool(env, src)
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
	return eval(r.prg, map[string]any{"subject": c.Subject, "claims": claims, "profile": c.Profile})
}

// String is the role's expression.
func (r *Role) String() string {
	if r == nil {
		return ""
	}
	return r.src
}
