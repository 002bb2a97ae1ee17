package config

import (
	"strings"
	"testing"
	"time"
)

// TestProtectionParses: maxInFlight, maxQueued and breaker reach the Spec,
// with breaker.cooldown's default filled in, and a server without them has
// neither a cap nor a breaker.
func TestProtectionParses(t *testing.T) {
	cfg, err := Parse(strings.NewReader(`{"mcpServers": {
		"capped": {"command": "srv", "maxInFlight": 2, "maxQueued": 5},
		"remote": {"url": "https://example.com/mcp", "breaker": {"failures": 3}},
		"tuned": {"url": "https://example.com/mcp", "breaker": {"failures": 1, "cooldown": "2s"}},
		"plain": {"command": "srv"}}}`), anyEnv)
	if err != nil {
		t.Fatal(err)
	}
	specs := map[string]Spec{}
	for _, s := range cfg.Servers {
		specs[s.Name] = s
	}
	if s := specs["capped"]; s.MaxInFlight != 2 || s.MaxQueued != 5 || s.Breaker != (Breaker{}) {
		t.Errorf("capped: maxInFlight %d, maxQueued %d, breaker %+v; want 2, 5, none", s.MaxInFlight, s.MaxQueued, s.Breaker)
	}
	if b := specs["remote"].Breaker; b.Failures != 3 || b.Cooldown.D() != DefaultBreakerCooldown {
		t.Errorf("remote: breaker %+v, want 3 failures and the default cooldown", b)
	}
	if b := specs["tuned"].Breaker; b.Failures != 1 || b.Cooldown.D() != 2*time.Second {
		t.Errorf("tuned: breaker %+v, want 1 failure and 2s", b)
	}
	if s := specs["plain"]; s.MaxInFlight != 0 || s.MaxQueued != 0 || s.Breaker != (Breaker{}) {
		t.Errorf("plain: %d, %d, %+v; want no cap and no breaker", s.MaxInFlight, s.MaxQueued, s.Breaker)
	}
}
