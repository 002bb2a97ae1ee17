package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

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

// validProfileName reports whether name may follow /mcp/p/ in a URL and
// --profile: a letter or digit, then up to 63 letters, digits, '_', '.'
// and '-'. (A regular expression of it, compiled at every start, cost
// about 900 allocations for a rule few configs use.)
func validProfileName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || c != '_' && c != '.' && c != '-') {
			return false
		}
	}
	return true
}

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
func (p *fieldErrs) profiles(raw json.RawMessage, field string, lookup func(string) (string, bool)) (map[string]policy.Profile, map[string]map[string]Overrides) {
	if rawAbsent(raw) {
		return nil, nil
	}
	var each map[string]json.RawMessage
	if rawKind(raw) != "object" || json.Unmarshal(raw, &each) != nil {
		p.wrongType(field, "object", raw)
		return nil, nil
	}
	out := make(map[string]policy.Profile, len(each))
	var shaped map[string]map[string]Overrides
	for _, name := range sortedMapKeys(each) {
		var withOverrides struct {
			Overrides json.RawMessage `json:"overrides"`
		}
		var pr policy.Profile
		if rawKind(each[name]) == "object" {
			_ = json.Unmarshal(each[name], &withOverrides)
		}
		if err := strictDecode(withoutKey(each[name], "overrides"), &pr); err != nil {
			p.addf(field+"."+name, "want {\"servers\": [...], \"tools\": [globs], \"overrides\": {\"<server>\": {...}}}: %v", err)
			continue
		}
		out[name] = pr
		if o := p.profileOverrides(withOverrides.Overrides, field+"."+name+".overrides", lookup); o != nil {
			if shaped == nil {
				shaped = map[string]map[string]Overrides{}
			}
			shaped[name] = o
		}
	}
	for _, name := range sortedMapKeys(out) {
		pr := out[name]
		at := field + "." + name
		if !validProfileName(name) {
			p.addf(at, "a profile's name goes into URLs (/mcp/p/<name>): use letters, digits, '_', '.' and '-', at most 64")
		}
		if err := pr.Check(); err != nil {
			p.add(at, err)
		}
	}
	return out, shaped
}

// profileOverrides decodes a profile's "overrides": by server, the same
// overrides a server's entry holds, each checked as a server's are, its
// errors naming the profile and the server.
func (p *fieldErrs) profileOverrides(raw json.RawMessage, field string, lookup func(string) (string, bool)) map[string]Overrides {
	if rawAbsent(raw) {
		return nil
	}
	var byServer map[string]json.RawMessage
	if rawKind(raw) != "object" || json.Unmarshal(raw, &byServer) != nil {
		p.wrongType(field, "object", raw)
		return nil
	}
	out := make(map[string]Overrides, len(byServer))
	for _, server := range sortedMapKeys(byServer) {
		sub := fieldErrs{prefix: p.prefix + field + "." + server + ": "}
		// A server's entry holds its overrides under "overrides": the
		// same decoder reads them here, as {"overrides": ...}.
		out[server] = sub.overrides(byServer[server], lookup)
		p.errs = append(p.errs, sub.errs...)
	}
	return out
}

// withoutKey is the JSON object raw without its member key (raw itself
// when it is not an object or has no such member).
func withoutKey(raw json.RawMessage, key string) json.RawMessage {
	var m map[string]json.RawMessage
	if rawKind(raw) != "object" || json.Unmarshal(raw, &m) != nil {
		return raw
	}
	if _, ok := m[key]; !ok {
		return raw
	}
	delete(m, key)
	b, err := json.Marshal(m)
	if err != nil {
		return raw
	}
	return b
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

// checkProfileOverrides refuses a profile's overrides of a server the
// config does not have, or one the profile does not show.
func checkProfileOverrides(profiles map[string]policy.Profile, overrides map[string]map[string]Overrides, servers []Spec) []error {
	id := map[string]string{}
	for _, s := range servers {
		sid, err := naming.ServerID(s.Name)
		if err != nil {
			sid = s.Name
		}
		id[s.Name], id[sid] = sid, sid
	}
	var errs []error
	for _, name := range sortedMapKeys(overrides) {
		shown := map[string]bool{}
		for _, s := range profiles[name].Servers {
			shown[id[s]] = true
		}
		for _, s := range sortedMapKeys(overrides[name]) {
			switch sid, ok := id[s]; {
			case !ok:
				errs = append(errs, fmt.Errorf("trunk.profiles.%s.overrides.%s: no server %q is configured", name, s, s))
			case len(shown) > 0 && !shown[sid]:
				errs = append(errs, fmt.Errorf("trunk.profiles.%s.overrides.%s: the profile does not show server %q (add it to its servers)", name, s, s))
			}
		}
	}
	return errs
}
