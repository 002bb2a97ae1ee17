// Package policy decides, for one caller and one item a server offers,
// whether the caller may see and use it: the rules of trunk.policy, CEL
// expressions over the caller's claims and the item, and the named views
// of trunk.profiles; and who holds a role (Role: trunk.policy.operators,
// an expression over the caller alone).
//
// CEL rather than Cedar: an access token's claims are arbitrary JSON (a
// groups array, a nested realm_access object, an email string), and CEL
// reads them as they are, where Cedar wants them mapped onto an entity
// model first. CEL is not Turing complete, runs in time linear in the
// expression, and is type-checked when the config loads, so a rule that
// cannot work is refused at load, naming it, rather than at a caller's
// first request. Kubernetes admission policies and Envoy use it for the
// same reasons.
//
// The expressions are the subset of CEL that package expr implements,
// with cel-go's semantics: what is outside it is refused at load, naming
// the rule, never evaluated otherwise.
//
// A decision fails closed: a deny rule that cannot be evaluated (a claim
// it reads is absent, a value of the wrong type) denies, and an allow rule
// that cannot be evaluated does not allow.
package policy
