package access

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/policy"
	"github.com/mcptrunk/mcptrunk/naming"
	"github.com/mcptrunk/mcptrunk/proxy/catalog"
	"github.com/mcptrunk/mcptrunk/upstream"
)

func build(servers ...string) *catalog.Catalog {
	var in []catalog.Server
	for _, s := range servers {
		in = append(in, catalog.Server{Name: s, Spec: config.Spec{Name: s}, Listed: true, Settled: true,
			Items: upstream.Catalog{Tools: []upstream.Item{{Key: "t", Raw: []byte(`{"name":"t","annotations":{"destructiveHint":false}}`)}}}})
	}
	return catalog.Build(catalog.Input{Servers: in, Logger: slog.New(slog.DiscardHandler),
		Policy:   catalog.PolicyOf(config.TrunkOptions{Prefix: naming.Default.Prefix, MaxNameLength: 64}),
		OwnTools: []catalog.Entry{{Exported: naming.Default.Name(naming.TrunkServer, "status"), Server: naming.TrunkServer, Raw: "status", Item: []byte(`{"name":"mcp__trunk__status"}`)}}})
}

func tools(cat *catalog.Catalog) []string {
	var out []string
	for _, e := range cat.Lists[catalog.ListTools] {
		out = append(out, e.Server)
	}
	return out
}

// Views are cached per identity and catalog: the same identity gets the
// same view until the catalog changes, another identity never gets it.
func TestViewsPerIdentity(t *testing.T) {
	r := New(config.TrunkOptions{
		Policy:   config.Policy{Rules: []policy.Rule{{Allow: `server == "trunk" || server in claims.?servers.orValue([])`}}},
		Profiles: map[string]policy.Profile{"w": {Servers: []string{"weather"}}},
	}, slog.New(slog.DiscardHandler))
	cat := build("notes", "weather")
	ada := NewCaller("ada", map[string]any{"servers": []any{"notes", "weather"}}, "")
	sam := NewCaller("ada", map[string]any{"servers": []any{"weather"}}, "") // the same subject, other claims
	adaW := NewCaller("ada", map[string]any{"servers": []any{"notes", "weather"}}, "w")

	va := r.View(cat, ada)
	if got := tools(va); len(got) != 3 {
		t.Fatalf("ada sees %v, want notes, trunk and weather", got)
	}
	if r.View(cat, ada) != va {
		t.Error("the same identity and catalog built the view again")
	}
	if got := tools(r.View(cat, sam)); len(got) != 2 || got[0] != "trunk" || got[1] != "weather" {
		t.Errorf("other claims under the same subject see %v, want trunk and weather", got)
	}
	if got := tools(r.View(cat, adaW)); len(got) != 2 || got[0] != "trunk" || got[1] != "weather" {
		t.Errorf("the profile w shows %v, want the trunk's own tools and weather", got)
	}
	next := build("notes", "weather")
	if v := r.View(next, ada); v == va || len(tools(v)) != 3 {
		t.Error("a new catalog must get a new view")
	}
	if !r.HasProfile("w") || r.HasProfile("x") {
		t.Error("HasProfile")
	}
}

// With no policy and no profile the whole catalog is served as it is; a
// policy that does not compile denies everything.
func TestViewWithoutRules(t *testing.T) {
	cat := build("notes")
	if r := New(config.TrunkOptions{}, slog.New(slog.DiscardHandler)); r.View(cat, NewCaller("", nil, "")) != cat {
		t.Error("no rules: the catalog itself, not a view")
	}
	broken := New(config.TrunkOptions{Policy: config.Policy{Rules: []policy.Rule{{Allow: "server =="}}}}, slog.New(slog.DiscardHandler))
	if got := tools(broken.View(cat, NewCaller("ada", nil, ""))); len(got) != 0 {
		t.Errorf("a broken policy shows %v, want nothing", got)
	}
}

// A rule that fails for a caller (a claim it reads is missing) fails for
// every item of a view: it denies them all, and is logged once.
func TestEvaluationErrorLoggedOnce(t *testing.T) {
	var logs strings.Builder
	r := New(config.TrunkOptions{Policy: config.Policy{Rules: []policy.Rule{{Allow: `"admin" in claims.groups`}}}},
		slog.New(slog.NewTextHandler(&logs, nil)))
	if got := tools(r.View(build("notes", "weather", "files"), NewCaller("ada", map[string]any{"sub": "ada"}, ""))); len(got) != 0 {
		t.Errorf("a caller without groups sees %v, want nothing", got)
	}
	if n := strings.Count(logs.String(), "could not be evaluated"); n != 1 {
		t.Errorf("the failing rule was logged %d times for 4 items, want once:\n%s", n, logs.String())
	}
}

// trunk.policy.operators decides who reads the operators' pages: the
// callers it matches; one it cannot be evaluated for is not an operator,
// logged once without the claim's value; without it no one is.
func TestOperator(t *testing.T) {
	var logs strings.Builder
	r := New(config.TrunkOptions{Policy: config.Policy{Operators: `"admin" in claims.groups`}}, slog.New(slog.NewTextHandler(&logs, nil)))
	admin := policy.Caller{Subject: "ada", Claims: map[string]any{"groups": []any{"admin"}}}
	if !r.Operator(admin) || r.Operator(policy.Caller{Subject: "sam", Claims: map[string]any{"groups": []any{"support"}}}) {
		t.Error("operators: want the admin and not support")
	}
	for range 3 {
		if r.Operator(policy.Caller{Subject: "eve", Claims: map[string]any{"email": "eve@secret.example"}}) {
			t.Error("a caller without groups is an operator")
		}
	}
	if n := strings.Count(logs.String(), "could not be evaluated"); n != 1 || strings.Contains(logs.String(), "secret.example") {
		t.Errorf("the failing expression was logged %d times, want once and without claims:\n%s", n, logs.String())
	}
	if New(config.TrunkOptions{}, slog.New(slog.DiscardHandler)).Operator(admin) {
		t.Error("without trunk.policy.operators a caller is an operator")
	}
}
