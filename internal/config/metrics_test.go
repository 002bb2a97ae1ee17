package config

import (
	"strings"
	"testing"
)

// trunk.metrics: off when absent, a loopback HOST:PORT when set, and an
// error naming the field for each mistake.
func TestConfigMetrics(t *testing.T) {
	for _, tc := range []struct {
		trunk   string
		want    Metrics
		wantErr string
	}{
		{`{}`, Metrics{}, ""},
		{`{"metrics": null}`, Metrics{}, ""},
		{`{"metrics": {}}`, Metrics{}, ""},
		{`{"metrics": {"listen": ""}}`, Metrics{}, ""},
		{`{"metrics": {"listen": "127.0.0.1:9464"}}`, Metrics{Listen: "127.0.0.1:9464"}, ""},
		{`{"metrics": {"listen": "[::1]:0"}}`, Metrics{Listen: "[::1]:0"}, ""},
		{`{"metrics": {"listen": "LocalHost:9464"}}`, Metrics{Listen: "LocalHost:9464"}, ""},
		{`{"metrics": "127.0.0.1:9464"}`, Metrics{}, "trunk.metrics: want object, got string"},
		{`{"metrics": {"listen": 9464}}`, Metrics{}, "trunk.metrics.listen: want string, got number"},
		{`{"metrics": {"listen": "9464"}}`, Metrics{}, `trunk.metrics.listen: must be HOST:PORT, such as 127.0.0.1:9464, got "9464"`},
		{`{"metrics": {"listen": ":9464"}}`, Metrics{}, `trunk.metrics.listen: must be a loopback address`},
		{`{"metrics": {"listen": "192.0.2.1:9464"}}`, Metrics{}, `trunk.metrics.listen: must be a loopback address`},
		{`{"metrics": {"listen": "example.com:9464"}}`, Metrics{}, `trunk.metrics.listen: must be a loopback address`},
		{`{"metrics": {"listen": "127.0.0.1:9464", "port": 1}}`, Metrics{Listen: "127.0.0.1:9464"}, ""}, // unknown keys: the schema's to flag
	} {
		c, err := parseString(t, `{"mcpServers": {}, "trunk": `+tc.trunk+`}`, noEnv)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("trunk %s: error %v, want one containing %q", tc.trunk, err, tc.wantErr)
			}
			continue
		}
		if err != nil || c.Trunk.Metrics != tc.want {
			t.Errorf("trunk %s: %+v, %v; want %+v", tc.trunk, c.Trunk.Metrics, err, tc.want)
		}
	}
}

func TestIsLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1": true, "127.1.2.3": true, "::1": true, "localhost": true, "LOCALHOST": true,
		"": false, "0.0.0.0": false, "::": false, "192.0.2.1": false, "example.com": false, "localhost.example.com": false, "[::1]": false,
	} {
		if got := IsLoopbackHost(host); got != want {
			t.Errorf("IsLoopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}
