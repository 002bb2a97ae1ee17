package policy

import (
	"errors"
	"fmt"

	"github.com/mcptrunk/mcptrunk/internal/policy/expr"
)

// Rule is one entry of trunk.policy.rules: a CEL expression that allows
// or denies what it matches. Exactly one of Allow and Deny is set.
type Rule struct {
	Allow string `json:"allow,omitempty"`
	Deny  string `json:"deny,omitempty"`
}

// Caller is who asks: what the access token proved, and the profile the
// caller came through ("" for none). A caller without a token (the stdio
// host, the static token of serve --http) has an empty Subject and no
// claims.
type Caller struct {
	Subject string
	Claims  map[string]any
	Profile string
}

// Item is one thing a server offers, as the rules see it.
type Item struct {
	Server   string // the server's name in the config
	Kind     string // "tool", "prompt", "resource" or "template"
	Name     string // its name at the server (a resource's URI, a template's URI template)
	Exported string // its name (or URI) as the host sees it
	// Annotations are a tool's annotations as its server gave them;
	// Decide fills in the hints it leaves out (see hintDefaults).
	Annotations map[string]any
}

// Policy is trunk.policy compiled. A nil *Policy allows everything.
type Policy struct {
	rules []compiled
}

type compiled struct {
	deny bool
	src  string
	prg  *expr.Program
}

// variables are the names a rule may read, and their types.
var variables = map[string]*expr.Type{
	"subject":     expr.String,
	"claims":      expr.MapOf(expr.String, expr.Dyn),
	"profile":     expr.String,
	"server":      expr.String,
	"kind":        expr.String,
	"name":        expr.String,
	"exported":    expr.String,
	"annotations": expr.MapOf(expr.String, expr.Dyn),
}

// RuleError is a rule that does not compile: Field names it
// (rules[i].allow, rules[i].deny, or rules[i] when it is neither).
type RuleError struct {
	Field string
	Err   error
}

func (e *RuleError) Error() string { return e.Field + ": " + e.Err.Error() }

// Compile checks and compiles rules; the error is a *RuleError. No rules
// compile to a nil Policy.
func Compile(rules []Rule) (*Policy, error) {
	if len(rules) == 0 {
		return nil, nil
	}
	p := &Policy{}
	for i, r := range rules {
		field := fmt.Sprintf("rules[%d]", i)
		switch {
		case (r.Allow == "") == (r.Deny == ""):
			return nil, &RuleError{field, errors.New("set exactly one of allow and deny, each a CEL expression")}
		case r.Deny != "":
			field += ".deny"
		default:
			field += ".allow"
		}
		src := r.Allow + r.Deny
		prg, err := expr.Compile(src, variables)
		if err != nil {
			return nil, &RuleError{field, err}
		}
		p.rules = append(p.rules, compiled{deny: r.Deny != "", src: src, prg: prg})
	}
	return p, nil
}

// Decision is the outcome of the rules for one caller and item.
type Decision struct {
	Allowed bool
	// Rule is the source of the rule that decided: the deny rule that
	// matched or failed, or the allow rule that matched; "" when no rule
	// matched (denied by default).
	Rule string
	// Err is why a rule could not be evaluated, when one could not; a
	// failed deny rule denies.
	Err error
}

// Decide evaluates the rules: any deny rule that matches (or cannot be
// evaluated) denies; otherwise any allow rule that matches allows;
// otherwise the item is denied. A nil Policy allows everything.
func (p *Policy) Decide(c Caller, it Item) Decision {
	if p == nil {
		return Decision{Allowed: true}
	}
	vars := activation(c, it)
	var allowedBy string
	var failed error
	for _, r := range p.rules {
		if !r.deny && allowedBy != "" {
			continue
		}
		match, err := r.prg.Eval(vars)
		switch {
		case err != nil && r.deny:
			return Decision{Rule: r.src, Err: err}
		case err != nil:
			failed = err
		case match && r.deny:
			return Decision{Rule: r.src}
		case match:
			allowedBy = r.src
		}
	}
	if allowedBy != "" {
		return Decision{Allowed: true, Rule: allowedBy}
	}
	return Decision{Err: failed}
}

func activation(c Caller, it Item) map[string]any {
	claims := c.Claims
	if claims == nil {
		claims = map[string]any{}
	}
	annotations := withHints(it.Kind, it.Annotations)
	return map[string]any{
		"subject": c.Subject, "claims": claims, "profile": c.Profile,
		"server": it.Server, "kind": it.Kind, "name": it.Name, "exported": it.Exported,
		"annotations": annotations,
	}
}

// hintDefaults are the four hints every item has when the rules read it,
// so that a rule such as `annotations.destructiveHint` needs no has()
// guard, and a deny rule over them never fails (failing, it would deny).
// A tool's are MCP's defaults for a tool that does not say: it may change
// things, destroy and reach outside. A prompt, resource or template is
// only read: it changes nothing.
var hintDefaults = map[bool]map[string]any{
	true:  {"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": true},
	false: {"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false},
}

func withHints(kind string, given map[string]any) map[string]any {
	defaults := hintDefaults[kind == "tool"]
	out := make(map[string]any, len(given)+len(defaults))
	for k, v := range defaults {
		out[k] = v
	}
	for k, v := range given {
		out[k] = v
	}
	return out
}
