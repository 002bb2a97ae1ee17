package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"

	"github.com/mcptrunk/mcptrunk/internal/policy"
	"github.com/mcptrunk/mcptrunk/naming"
)

// Policy is trunk.policy: the rules that decide, per caller, which items
// each sees and may use (see internal/policy). None: everyone sees all.
type Policy struct {
	Rules []policy.Rule `json:"rules,omitempty"`
	// Operators is a CEL expression over the caller (subject, claims,
	// profile) matching those who may read the operators' pages of serve
	// --http (the status page, /events, /metrics) with an access token;
	// "": none may (policy.Role).
	Operators string `json:"operators,omitempty"`
}

type rawPolicy struct {
	Rules     json.RawMessage `json:"rules"`
	Operators json.RawMessage `json:"operators"`
}

// profileName is what may follow /mcp/p/ in a URL and --profile.
var profileName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// policyOptions decodes and compiles trunk.policy, so that a rule that
// cannot work is refused at load, named.
func (p *fieldErrs) policyOptions(raw json.RawMessage, field string) Policy {
	var rp rawPolicy
	if !p.object(raw, field, &rp) {
		return Policy{}
	}
	var out Policy
	if s, ok := p.str(rp.Operators, field+".operators"); ok {
		if _, err := policy.CompileRole(s); err != nil {
			p.add(field+".operators", err)
		} else {
			out.Operators = s
		}
	}
	if rawAbsent(rp.Rules) {
		return out
	}
	var rules []policy.Rule
	if err := strictDecode(rp.Rules, &rules); err != nil {
		p.addf(field+".rules", "want a list of {\"allow\": CEL} or {\"deny\": CEL}: %v", err)
		return out
	}
	if _, err := policy.Compile(rules); err != nil {
		var re *policy.RuleError
		if errors.As(err, &re) {
			p.add(field+"."+re.Field, re.Err)
		} else {
			p.add(field+".rules", err)
		}
		return out
	}
	out.Rules = rules
	return out
}

// profiles decodes trunk.profiles, named views of the trunk, checking
// their names and globs; checkProfileServers checks their servers once
// the servers are known.
func (p *fieldErrs) profiles(raw json.RawMessage, field string) map[string]policy.Profile {
	if rawAbsent(raw) {
		return nil
	}
	var out map[string]policy.Profile
	if rawKind(raw) != "object" {
		p.wrongType(field, "object", raw)
		return nil
	}
	if err := strictDecode(raw, &out); err != nil {
		p.addf(field, "want {\"<name>\": {\"servers\": [...], \"tools\": [globs]}}: %v", err)
		return nil
	}
	for _, name := range sortedMapKeys(out) {
		pr := out[name]
		at := field + "." + name
		if !profileName.MatchString(name) {
			p.addf(at, "a profile's name goes into URLs (/mcp/p/<name>): use letters, digits, '_', '.' and '-', at most 64")
		}
		if err := pr.Check(); err != nil {
			p.add(at, err)
		}
	}
	return out
}

// strictDecode is json.Unmarshal refusing unknown keys: in access rules
// a misspelt key would otherwise change who sees what, silently.
func strictDecode(raw json.RawMessage, v any) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	return d.Decode(v)
}

// checkProfileServers refuses a profile that names a server the config
// does not have (by its name in mcpServers or its identifier): a typo
// would otherwise hide the server from everyone on that profile.
func checkProfileServers(profiles map[string]policy.Profile, servers []Spec) []error {
	known := map[string]bool{}
	for _, s := range servers {
		known[s.Name] = true
		if id, err := naming.ServerID(s.Name); err == nil {
			known[id] = true
		}
	}
	var errs []error
	for _, name := range sortedMapKeys(profiles) {
		for i, s := range profiles[name].Servers {
			if !known[s] {
				errs = append(errs, fmt.Errorf("trunk.profiles.%s.servers[%d]: no server %q is configured", name, i, s))
			}
		}
	}
	return errs
}
