package config

import (
	"strings"
	"testing"
	"time"
)

// trunk.codeMode: off with the default budgets when absent, each budget
// its own when set, and an error naming the field for each mistake.
func TestConfigCodeMode(t *testing.T) {
	var defaults CodeMode
	on := defaults
	on.Enabled = true
	set := CodeMode{Enabled: true, WallTime: Duration(2 * time.Second), MaxCalls: 3, MaxInFlight: 1, MaxResultBytes: 100, MaxLogBytes: 10, MaxMemoryBytes: 64 << 20, MaxRuns: 2}
	for _, tc := range []struct {
		trunk   string
		want    CodeMode
		wantErr string
	}{
		{`{}`, defaults, ""},
		{`{"codeMode": null}`, defaults, ""},
		{`{"codeMode": {}}`, defaults, ""},
		{`{"codeMode": {"enabled": true}}`, on, ""},
		{`{"codeMode": {"enabled": true, "wallTime": "0s", "maxCalls": 0}}`, on, ""},
		{`{"codeMode": {"enabled": true, "wallTime": "2s", "maxCalls": 3, "maxInFlight": 1, "maxResultBytes": 100, "maxLogBytes": 10, "maxMemoryBytes": 67108864, "maxRuns": 2}}`, set, ""},
		{`{"codeMode": true}`, defaults, "trunk.codeMode: want object, got boolean"},
		{`{"codeMode": {"enabled": "yes"}}`, defaults, "trunk.codeMode.enabled: want boolean, got string"},
		{`{"codeMode": {"wallTime": 30}}`, defaults, `trunk.codeMode.wallTime: want a duration string such as "30s", got number`},
		{`{"codeMode": {"wallTime": "-1s"}}`, defaults, "trunk.codeMode.wallTime: duration must not be negative"},
		{`{"codeMode": {"maxCalls": -1}}`, defaults, "trunk.codeMode.maxCalls: must be >= 1, got -1"},
		{`{"codeMode": {"maxInFlight": "8"}}`, defaults, "trunk.codeMode.maxInFlight: want integer, got string"},
		{`{"codeMode": {"maxResultBytes": 1.5}}`, defaults, "trunk.codeMode.maxResultBytes: want integer"},
		{`{"codeMode": {"maxLogBytes": -5}}`, defaults, "trunk.codeMode.maxLogBytes: must be >= 1, got -5"},
		{`{"codeMode": {"maxRuns": -2}}`, defaults, "trunk.codeMode.maxRuns: must be >= 1, got -2"},
		{`{"codeMode": {"maxMemoryBytes": 1000}}`, defaults, "trunk.codeMode.maxMemoryBytes: must be >= 16777216 (16 MiB), got 1000"},
		{`{"codeMode": {"maxMemoryBytes": "256MiB"}}`, defaults, "trunk.codeMode.maxMemoryBytes: want integer, got string"},
	} {
		c, err := parseString(t, `{"mcpServers": {}, "trunk": `+tc.trunk+`}`, noEnv)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("trunk %s: error %v, want one containing %q", tc.trunk, err, tc.wantErr)
			}
			continue
		}
		if err != nil || c.Trunk.CodeMode != tc.want {
			t.Errorf("trunk %s: %+v, %v; want %+v", tc.trunk, c.Trunk.CodeMode, err, tc.want)
		}
	}
}

// WithDefaults fills the budgets left 0 and keeps those set.
func TestCodeModeWithDefaults(t *testing.T) {
	got := CodeMode{Enabled: true, MaxCalls: 3}.WithDefaults()
	want := CodeMode{Enabled: true, WallTime: Duration(DefaultCodeWallTime), MaxCalls: 3, MaxInFlight: DefaultCodeMaxInFlight,
		MaxResultBytes: DefaultCodeMaxResultBytes, MaxLogBytes: DefaultCodeMaxLogBytes, MaxMemoryBytes: DefaultCodeMaxMemoryBytes, MaxRuns: DefaultCodeMaxRuns()}
	if got != want || got.MaxRuns < 1 {
		t.Errorf("WithDefaults = %+v, want %+v", got, want)
	}
}
