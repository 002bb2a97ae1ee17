package policy_test

import (
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/policy"
)

var (
	admin   = policy.Caller{Subject: "ada", Claims: map[string]any{"sub": "ada", "groups": []any{"admin", "dev"}}}
	support = policy.Caller{Subject: "sam", Claims: map[string]any{"sub": "sam", "groups": []any{"support"}}}
	nobody  = policy.Caller{} // the stdio host: no token, no claims
	team    = []policy.Rule{
		{Allow: `"groups" in claims && "admin" in claims.groups`},
		{Allow: `"support" in claims.groups && server == "weather"`},
		{Deny: `annotations.destructiveHint == true && !("admin" in claims.groups)`},
	}
	forecast = policy.Item{Server: "weather", Kind: "tool", Name: "forecast", Exported: "mcp__weather__forecast", Annotations: map[string]any{"readOnlyHint": true, "destructiveHint": false}}
	addNote  = policy.Item{Server: "notes", Kind: "tool", Name: "add_note", Exported: "mcp__notes__add_note"}
	dropCity = policy.Item{Server: "weather", Kind: "tool", Name: "drop_city"} // no annotations: destructive by default
	alerts   = policy.Item{Server: "weather", Kind: "prompt", Name: "alerts"}
)

func TestDecide(t *testing.T) {
	p, err := policy.Compile(team)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		caller policy.Caller
		item   policy.Item
		want   bool
	}{
		{"admin sees notes", admin, addNote, true},
		{"admin sees weather", admin, forecast, true},
		{"admin may destroy", admin, dropCity, true},
		{"support sees weather", support, forecast, true},
		{"support does not see notes", support, addNote, false},
		{"a deny rule beats an allow rule", support, dropCity, false},
		{"a prompt is not destructive", support, alerts, true},
		// claims.groups is absent: the allow rules cannot be evaluated
		// (the first guards with "in", the second does not) and nothing
		// is allowed.
		{"no claims, nothing allowed", nobody, forecast, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := p.Decide(tc.caller, tc.item)
			if d.Allowed != tc.want {
				t.Fatalf("Decide = %+v, want allowed %v", d, tc.want)
			}
		})
	}
}

func TestDecideFailsClosed(t *testing.T) {
	p, err := policy.Compile([]policy.Rule{
		{Allow: `true`},
		{Deny: `claims.level > 3`}, // a string level cannot be compared: the rule fails
	})
	if err != nil {
		t.Fatal(err)
	}
	d := p.Decide(policy.Caller{Claims: map[string]any{"level": "high"}}, forecast)
	if d.Allowed || d.Err == nil || d.Rule != `claims.level > 3` {
		t.Fatalf("a deny rule that cannot be evaluated: %+v, want denied by it with its error", d)
	}
	if d := p.Decide(policy.Caller{Claims: map[string]any{"level": 1}}, forecast); !d.Allowed || d.Rule != "true" {
		t.Fatalf("the deny rule evaluated to false: %+v, want allowed by the allow rule", d)
	}
	open, err := policy.Compile(nil)
	if err != nil || open != nil {
		t.Fatalf("no rules compile to a nil policy, got %v, %v", open, err)
	}
	if !open.Decide(nobody, addNote).Allowed {
		t.Fatal("a nil policy allows everything")
	}
}

func TestCompileNamesTheRule(t *testing.T) {
	for _, tc := range []struct {
		rules []policy.Rule
		want  string
	}{
		{[]policy.Rule{{Allow: "true"}, {Deny: `server ==`}}, "rules[1].deny: "},
		{[]policy.Rule{{Allow: `claimz.groups`}}, "rules[0].allow: "},
		{[]policy.Rule{{Allow: `"a string"`}}, "rules[0].allow: the expression is a string, want a bool"},
		{[]policy.Rule{{Allow: `subject.lowerAscii() == "ada"`}}, "rules[0].allow: ERROR: <input>:1:9: undeclared reference to 'lowerAscii'"},
		{[]policy.Rule{{Deny: `timestamp(claims.iat) < now`}}, "rules[0].deny: ERROR: <input>:1:1: undeclared reference to 'timestamp'"},
		{[]policy.Rule{{}}, "rules[0]: set exactly one of allow and deny"},
		{[]policy.Rule{{Allow: "true", Deny: "false"}}, "rules[0]: set exactly one of allow and deny"},
	} {
		_, err := policy.Compile(tc.rules)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("Compile(%+v) = %v, want an error starting %q", tc.rules, err, tc.want)
		}
	}
}

func TestProfileAdmits(t *testing.T) {
	weather := policy.Profile{Servers: []string{"weather"}}
	readers := policy.Profile{Tools: []string{"get_*", "notes/list_*"}}
	prompt := policy.Item{Server: "notes", Kind: "prompt", Name: "summarise"}
	for _, tc := range []struct {
		name    string
		profile policy.Profile
		item    policy.Item
		want    bool
	}{
		{"its server", weather, forecast, true},
		{"another server", weather, addNote, false},
		{"another server's prompt", weather, prompt, false},
		{"a tool glob", readers, policy.Item{Server: "weather", Kind: "tool", Name: "get_alerts"}, true},
		{"a server/tool glob", readers, policy.Item{Server: "notes", Kind: "tool", Name: "list_notes"}, true},
		{"a server/tool glob, another server", readers, policy.Item{Server: "files", Kind: "tool", Name: "list_notes"}, false},
		{"no glob matches", readers, addNote, false},
		{"globs leave prompts alone", readers, prompt, true},
	} {
		if got := tc.profile.Admits(tc.item); got != tc.want {
			t.Errorf("%s: Admits = %v, want %v", tc.name, got, tc.want)
		}
	}
	if err := (policy.Profile{Tools: []string{"["}}).Check(); err == nil || !strings.Contains(err.Error(), "tools[0]") {
		t.Fatalf("Check of a bad glob = %v, want an error naming tools[0]", err)
	}
}
