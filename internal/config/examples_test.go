package config

import (
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestExamples: every config in docs/examples loads as mcptrunk loads a
// file (Load, with the environment), passes the schema, names the schema
// in $schema, and shows what its row in docs/examples/README.md says it
// shows.
func TestExamples(t *testing.T) {
	t.Setenv("HOME", t.TempDir())                       // the examples expand ${HOME}
	t.Setenv("ISSUER_URL", "https://login.example.com") // and team.json these
	t.Setenv("TRUNK_URL", "https://trunk.example.com")
	t.Setenv("MCPTRUNK_BIN", "/opt/mcptrunk/bin")
	t.Setenv("REDIS_URL", "redis://redis.example.com:6379/0") // and replicas.json these
	t.Setenv("STATE_KEY_FILE", "/run/secrets/mcptrunk/state.key")
	rs := configSchema(t)
	paths, err := filepath.Glob(filepath.Join(examplesDir, "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no examples in %s: %v", examplesDir, err)
	}
	index := string(readFile(t, filepath.Join(examplesDir, "README.md")))
	const schemaURL = `"$schema": "https://raw.githubusercontent.com/mcptrunk/mcptrunk/main/docs/config.schema.json"`
	loaded := map[string]*Config{}
	for _, path := range paths {
		name := filepath.Base(path)
		data := readFile(t, path)
		if err := validate(t, rs, data); err != nil {
			t.Errorf("%s: the schema rejects it: %v", name, err)
		}
		if !strings.Contains(string(data), schemaURL) {
			t.Errorf("%s: does not name the schema (%s)", name, schemaURL)
		}
		if !strings.Contains(index, "("+name+")") {
			t.Errorf("%s: not described in docs/examples/README.md", name)
		}
		cfg, err := Load(path)
		if err != nil {
			t.Errorf("Load(%s): %v", name, err)
			continue
		}
		loaded[name] = cfg
	}

	// What each example is there to show.
	if cfg := loaded["servers.json"]; cfg != nil {
		types := map[Transport]int{}
		for _, s := range cfg.Servers {
			types[s.Type]++
		}
		if types[TransportStdio] < 2 || types[TransportHTTP] < 1 {
			t.Errorf("servers.json: want two local servers and a remote one, got %v", types)
		}
	}
	if cfg := loaded["team.json"]; cfg != nil {
		if a := cfg.Trunk.HTTP.Auth; a == nil || a.Resource != "https://trunk.example.com/mcp" || len(cfg.Trunk.Policy.Rules) == 0 || len(cfg.Trunk.Profiles["weather"].Servers) != 1 {
			t.Errorf("team.json: want auth for ${TRUNK_URL}/mcp, a policy and the weather profile; got auth %+v, policy %+v, profiles %+v", a, cfg.Trunk.Policy, cfg.Trunk.Profiles)
		}
	}
	if cfg, team := loaded["replicas.json"], loaded["team.json"]; cfg != nil && team != nil {
		lim := cfg.Trunk.Limits["forecasts"]
		st := cfg.Trunk.State
		switch {
		case !reflect.DeepEqual(cfg.Trunk.HTTP.Auth, team.Trunk.HTTP.Auth) || !reflect.DeepEqual(cfg.Servers, team.Servers) || !reflect.DeepEqual(cfg.Trunk.Policy, team.Trunk.Policy):
			t.Errorf("replicas.json: want team.json's issuer, resource, servers and policy")
		case !st.Redis() || st.URL != "redis://redis.example.com:6379/0" || st.KeyFile != "/run/secrets/mcptrunk/state.key":
			t.Errorf("replicas.json: trunk.state %+v, want Redis at ${REDIS_URL} sealed with ${STATE_KEY_FILE}", st)
		case len(cfg.Trunk.Limits) != 1 || lim.Server != "weather" || lim.Tool != "forecast" || lim.Requests != 20 || lim.Window.D() != time.Minute || !slices.Equal(lim.By, []string{LimitBySubject}):
			t.Errorf("replicas.json: trunk.limits %+v, want one rule: 20 forecasts a minute per subject", cfg.Trunk.Limits)
		}
	}
	if cfg := loaded["lazy.json"]; cfg != nil {
		if !cfg.Trunk.Lazy || cfg.Trunk.IdleTimeout == 0 {
			t.Errorf("lazy.json: trunk lazy %v, idleTimeout %v; want both set", cfg.Trunk.Lazy, cfg.Trunk.IdleTimeout.D())
		}
		var eager, stays int
		for _, s := range cfg.Servers {
			if !s.Lazy {
				eager++
			}
			if s.IdleTimeout == 0 {
				stays++
			}
		}
		if eager != 1 || stays != 1 {
			t.Errorf("lazy.json: %d servers not lazy, %d never stopped; want one of each", eager, stays)
		}
	}
	if cfg := loaded["pinning.json"]; cfg != nil {
		want := filepath.Join(examplesDir, LockFileName)
		if cfg.Trunk.Pin != PinEnforce || cfg.Trunk.LockFile != want {
			t.Errorf("pinning.json: pin %q, lockfile %q; want %q, %q", cfg.Trunk.Pin, cfg.Trunk.LockFile, PinEnforce, want)
		}
	}
	if cfg := loaded["unprefixed.json"]; cfg != nil {
		var plain, named int
		for _, s := range cfg.Servers {
			if s.Unprefixed() {
				plain++
			} else {
				named++
			}
		}
		if plain != 1 || named != 1 {
			t.Errorf("unprefixed.json: %d servers without a namespace, %d with; want one of each", plain, named)
		}
	}
	for _, name := range []string{"servers.json", "lazy.json", "pinning.json", "unprefixed.json", "team.json", "replicas.json"} {
		if _, ok := loaded[name]; !ok {
			t.Errorf("docs/examples/%s did not load", name)
		}
	}
}
