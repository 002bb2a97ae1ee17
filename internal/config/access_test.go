package config

import (
	"strings"
	"testing"
)

// trunk.policy and trunk.profiles: decoded, compiled at load, and every
// mistake named by its field.
func TestConfigPolicyAndProfiles(t *testing.T) {
	servers := `"mcpServers":{"weather":{"command":"w"},"météo fr":{"command":"m"}}`
	c, err := parseString(t, `{`+servers+`,"trunk":{
		"policy":{"rules":[{"allow":"'admin' in claims.groups"},{"deny":"annotations.destructiveHint"}],"operators":"'ops' in claims.groups"},
		"profiles":{"weather":{"servers":["weather","meteo_fr"],"tools":["get_*"]},"all":{}}}}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := c.Trunk.Policy.Rules; len(r) != 2 || r[0].Allow == "" || r[1].Deny != "annotations.destructiveHint" {
		t.Fatalf("trunk.policy.rules = %+v", r)
	}
	if c.Trunk.Policy.Operators != "'ops' in claims.groups" {
		t.Errorf("trunk.policy.operators = %q", c.Trunk.Policy.Operators)
	}
	if p := c.Trunk.Profiles; len(p) != 2 || strings.Join(p["weather"].Servers, ",") != "weather,meteo_fr" || p["weather"].Tools[0] != "get_*" {
		t.Fatalf("trunk.profiles = %+v", p)
	}
	for _, tc := range []struct{ trunk, want string }{
		{`{"policy":{"rules":[{"allow":"true"},{"deny":"server =="}]}}`, `trunk.policy.rules[1].deny: `},
		{`{"policy":{"rules":[{"allow":"'x'"}]}}`, `trunk.policy.rules[0].allow: the expression is a string, want a bool`},
		{`{"policy":{"rules":[{"alow":"true"}]}}`, `trunk.policy.rules: want a list of`},
		{`{"policy":{"rules":{}}}`, `trunk.policy.rules: want a list of`},
		{`{"policy":[]}`, `trunk.policy: want object`},
		{`{"policy":{"operators":"server == 'notes'"}}`, `trunk.policy.operators: ERROR: <input>:1:1: undeclared reference to 'server'`},
		{`{"policy":{"operators":true}}`, `trunk.policy.operators: want string`},
		{`{"profiles":{"weather":{"servers":["wether"]}}}`, `trunk.profiles.weather.servers[0]: no server "wether" is configured`},
		{`{"profiles":{"a b":{}}}`, `trunk.profiles.a b: a profile's name goes into URLs`},
		{`{"profiles":{"w":{"tools":["["]}}}`, `trunk.profiles.w: tools[0]: "[" is not a glob`},
		{`{"profiles":{"w":{"tool":["x"]}}}`, `trunk.profiles: want {`},
	} {
		_, err := parseString(t, `{`+servers+`,"trunk":`+tc.trunk+`}`, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("trunk %s: error %v, want one containing %q", tc.trunk, err, tc.want)
		}
	}
}
