package textview

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/policy"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// TestStatusTableCatalog: a server that is running is listed live, even
// when its catalog matches a cache entry written long before it started;
// only a sleeping server is listed from the cache, with the entry's age.
func TestStatusTableCatalog(t *testing.T) {
	old := time.Now().Add(-31 * time.Second)
	var out bytes.Buffer
	StatusTable(&out, []upstream.Status{
		{Server: "woken", State: upstream.StateReady, Lazy: true, CachedAt: old},
		{Server: "asleep", State: upstream.StateSleeping, Lazy: true, CachedAt: old},
		{Server: "broken", State: upstream.StateFailed, CachedAt: old},
	})
	lines := strings.Split(out.String(), "\n")
	column := slices.Index(strings.Fields(lines[0]), "CATALOG")
	if column < 0 {
		t.Fatalf("header without CATALOG: %q", lines[0])
	}
	for i, want := range []string{"live", "cached 31s ago", "-"} {
		fields := strings.Fields(lines[i+1])
		if len(fields) <= column || fields[column] != strings.Fields(want)[0] || !strings.Contains(lines[i+1], want) {
			t.Errorf("line %q: want its catalog %q", lines[i+1], want)
		}
		if i != 1 && strings.Contains(lines[i+1], "31s") {
			t.Errorf("line %q shows the cache's age for a catalog not from the cache", lines[i+1])
		}
	}
}

// TestServeHint: a bare mcptrunk run in a terminal says what it is and
// how to try it; run by a host (stdin a pipe) or serving only HTTP, it
// says nothing.
func TestServeHint(t *testing.T) {
	hint := ServeHint(true, true)
	for _, want := range []string{"MCP server", "waiting for a host", "stdin", "mcptrunk list", "mcptrunk call"} {
		if !strings.Contains(hint, want) {
			t.Errorf("the hint does not say %q:\n%s", want, hint)
		}
	}
	if ServeHint(false, true) != "" || ServeHint(true, false) != "" {
		t.Error("a hint with stdin not a terminal, or not served")
	}
}

func TestAccessLines(t *testing.T) {
	if got := AccessLines(config.TrunkOptions{}, "/mcp"); len(got) != 0 {
		t.Errorf("no policy, no profiles: %q", got)
	}
	got := AccessLines(config.TrunkOptions{
		Policy:   config.Policy{Rules: []policy.Rule{{Allow: "true"}, {Deny: "false"}}, Operators: `"ops" in claims.groups`},
		Profiles: map[string]policy.Profile{"weather": {Servers: []string{"weather"}}, "readers": {Tools: []string{"get_*"}}},
	}, "/mcp")
	want := []string{
		"policy: 2 rules, deciding what each caller sees (deny first; nothing allowed is denied); callers without an access token have no claims",
		`operators: the status page, /events and /metrics of serve --http answer the static token and callers matching "ops" in claims.groups`,
		"profile readers: every server; tools get_*; at /mcp/p/readers and serve --profile readers",
		"profile weather: servers weather; every tool; at /mcp/p/weather and serve --profile weather",
	}
	if !slices.Equal(got, want) {
		t.Errorf("AccessLines:\n got %q\nwant %q", got, want)
	}
	if got := AccessLines(config.TrunkOptions{HTTP: config.HTTP{Auth: &config.HTTPAuth{}}}, "/mcp"); len(got) != 1 || !strings.Contains(got[0], "answer the static token alone") {
		t.Errorf("access tokens, no operators: %q", got)
	}
}
