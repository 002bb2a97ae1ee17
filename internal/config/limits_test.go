package config

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestLimitsParse: trunk.limits reaches TrunkOptions with by defaulting to
// subject; each mistake is named by its rule and field.
func TestLimitsParse(t *testing.T) {
	cfg, err := Parse(strings.NewReader(`{"mcpServers": {"weather": {"command": "w"}}, "trunk": {"limits": {
		"forecasts": {"server": "weather", "tool": "forecast", "requests": 20, "window": "1m"},
		"daily": {"by": ["subject", "server"], "requests": 1000, "daily": true}}}}`), anyEnv)
	if err != nil {
		t.Fatal(err)
	}
	f, d := cfg.Trunk.Limits["forecasts"], cfg.Trunk.Limits["daily"]
	if f.Server != "weather" || f.Tool != "forecast" || f.Requests != 20 || f.Window.D() != time.Minute || !slices.Equal(f.By, []string{"subject"}) {
		t.Errorf("forecasts: %+v", f)
	}
	if !slices.Equal(d.By, []string{"subject", "server"}) || !d.Daily || d.Window != 0 {
		t.Errorf("daily: %+v", d)
	}

	_, err = Parse(strings.NewReader(`{"mcpServers": {}, "trunk": {"limits": {
		"zero": {"requests": 0, "window": "1m"},
		"nowin": {"requests": 1, "window": "0s"},
		"glob": {"server": "[", "requests": 1, "window": "1s"},
		"by": {"by": ["user"], "requests": 1, "window": "1s"},
		"both": {"requests": 1, "window": "1s", "daily": true}}}}`), anyEnv)
	for _, want := range []string{
		"trunk.limits.zero.requests: must be 1 or more, got 0",
		"trunk.limits.nowin.window: must be a positive duration",
		`trunk.limits.glob.server: bad glob pattern "["`,
		`trunk.limits.by.by[0]: must be "subject", "server" or "tool", got "user"`,
		`trunk.limits.both: set window or "daily": true, not both`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want it to say %q", err, want)
		}
	}
	_, err = Parse(strings.NewReader(`{"mcpServers": {}, "trunk": {"limits": {"x": {"requests": 1, "window": "1s", "per": "subject"}}}}`), anyEnv)
	if err == nil || !strings.Contains(err.Error(), `trunk.limits: want {"<name>"`) || !strings.Contains(err.Error(), `unknown field "per"`) {
		t.Errorf("an unknown key in a rule: %v, want an error naming it", err)
	}
}
