package config

import (
	"slices"
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
		{`{"profiles":{"w":{"tool":["x"]}}}`, `trunk.profiles.w: want {`},
	} {
		_, err := parseString(t, `{`+servers+`,"trunk":`+tc.trunk+`}`, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("trunk %s: error %v, want one containing %q", tc.trunk, err, tc.want)
		}
	}
}

// A profile's own overrides are read by server, as a server's are; each
// mistake names the profile, the server, the tool and the field, and
// never quotes a value.
func TestConfigProfileOverrides(t *testing.T) {
	servers := `"mcpServers":{"notes":{"command":"n","overrides":{"tools":{"echo":{"description":"Echo it"}}}},"météo fr":{"command":"m"}}`
	c, err := parseString(t, `{`+servers+`,"trunk":{"profiles":{
		"ro":{"servers":["notes"],"overrides":{"notes":{"tools":{"echo":{"name":"say","arguments":{"text":{"fixed":"SECRET-1"}}}},"prompts":{"p":{"description":"P"}}}}},
		"all":{"overrides":{"meteo_fr":{"tools":{"f":{"title":"F"}}}}},
		"bare":{"servers":["notes"]}}}}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	ro := c.Trunk.ProfileOverrides["ro"]["notes"]
	if say := ro.Tools["echo"]; say.Name != "say" || string(say.Arguments["text"].Fixed) != `"SECRET-1"` || ro.Prompts["p"].Description != "P" {
		t.Errorf("trunk.profiles.ro.overrides.notes = %+v", ro)
	}
	if c.Trunk.ProfileOverrides["all"]["meteo_fr"].Tools["f"].Title != "F" {
		t.Errorf("trunk.profiles.all.overrides = %+v", c.Trunk.ProfileOverrides["all"])
	}
	if _, ok := c.Trunk.ProfileOverrides["bare"]; ok {
		t.Error("a profile without overrides has some")
	}
	if p := c.Trunk.Profiles["ro"]; strings.Join(p.Servers, ",") != "notes" {
		t.Errorf("trunk.profiles.ro = %+v", p)
	}
	// Set over the server's own: the profile's fields win, the server's
	// others stay.
	notes := c.Servers[slices.IndexFunc(c.Servers, func(s Spec) bool { return s.Name == "notes" })]
	if over := notes.Overrides.Over(ro).Tools["echo"]; over.Name != "say" || over.Description != "Echo it" || len(over.Arguments) != 1 {
		t.Errorf("the profile's over the server's: %+v", over)
	}
	if notes.Overrides.Tools["echo"].Name != "" {
		t.Error("Over changed the server's own overrides")
	}
	for _, tc := range []struct{ profiles, want string }{
		{`{"ro":{"overrides":[]}}`, `trunk.profiles.ro.overrides: want object, got array`},
		{`{"ro":{"overrides":{"notes":{"tools":{"echo":{"name":"say it"}}}}}}`, `trunk.profiles.ro.overrides.notes: overrides.tools.echo.name: must be 1 to 128`},
		{`{"ro":{"overrides":{"notes":{"tools":{"echo":{"arguments":{"text":{"fixed":"SECRET-1","default":"SECRET-2"}}}}}}}}`, `trunk.profiles.ro.overrides.notes: overrides.tools.echo.arguments.text: has both "default" and "fixed"`},
		{`{"ro":{"overrides":{"notes":{"tools":{"echo":{"annotations":"SECRET-1"}}}}}}`, `trunk.profiles.ro.overrides.notes: overrides.tools.echo.annotations: want object, got string`},
		{`{"ro":{"overrides":{"nots":{"tools":{}}}}}`, `trunk.profiles.ro.overrides.nots: no server "nots" is configured`},
		{`{"ro":{"servers":["meteo_fr"],"overrides":{"notes":{"tools":{}}}}}`, `trunk.profiles.ro.overrides.notes: the profile does not show server "notes"`},
		{`{"ro":{"overide":{}}}`, `trunk.profiles.ro: want {`},
	} {
		_, err := parseString(t, `{`+servers+`,"trunk":{"profiles":`+tc.profiles+`}}`, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("profiles %s: error %v, want one containing %q", tc.profiles, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "SECRET") {
			t.Errorf("profiles %s: the error quotes a value: %v", tc.profiles, err)
		}
	}
}

// A profile's name goes into URLs: a letter or digit, then up to 63
// letters, digits, '_', '.' and '-'.
func TestValidProfileName(t *testing.T) {
	for name, want := range map[string]bool{
		"a": true, "Z9": true, "0": true, "ro_v1.2-x": true, strings.Repeat("a", 64): true,
		"": false, strings.Repeat("a", 65): false, "_a": false, ".a": false, "-a": false,
		"a b": false, "a/b": false, "é": false, "a%2F": false, "a\x00": false, "a:b": false,
	} {
		if got := validProfileName(name); got != want {
			t.Errorf("validProfileName(%q) = %v, want %v", name, got, want)
		}
	}
}
