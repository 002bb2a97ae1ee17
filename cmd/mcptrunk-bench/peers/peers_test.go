package peers

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestMCPHubConfig: the config names one streamable-HTTP server at the
// upstream's URL, under the name the peer's tool names start with.
func TestMCPHubConfig(t *testing.T) {
	doc, err := mcpHubConfig("http://127.0.0.1:1234/mcp")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Servers map[string]struct{ Type, URL string } `json:"mcpServers"`
	}
	if err := json.Unmarshal(doc, &cfg); err != nil {
		t.Fatal(err)
	}
	s, ok := cfg.Servers[hubServer]
	if len(cfg.Servers) != 1 || !ok || s.Type != "streamable-http" || s.URL != "http://127.0.0.1:1234/mcp" {
		t.Fatalf("config %s", doc)
	}
}

// TestHubReady: ready only once the hub is and every server is connected.
func TestHubReady(t *testing.T) {
	for _, c := range []struct {
		body string
		want bool
	}{
		{`{"state":"ready","servers":[{"name":"conf","status":"connected"}]}`, true},
		{`{"state":"starting","servers":[{"name":"conf","status":"connected"}]}`, false},
		{`{"state":"ready","servers":[]}`, false},
		{`{"state":"ready","servers":[{"name":"conf","status":"connected"},{"name":"b","status":"disconnected","error":"boom"}]}`, false},
	} {
		got, err := hubReady([]byte(c.body))
		if got != c.want || (err == nil) != c.want {
			t.Errorf("hubReady(%s) = %v, %v; want %v", c.body, got, err, c.want)
		}
	}
	if _, err := hubReady([]byte("<html>")); err == nil {
		t.Error("hubReady accepted a page that is not JSON")
	}
}

// TestToolHiveArgs: thv proxy is told the upstream and the port to serve.
func TestToolHiveArgs(t *testing.T) {
	got := strings.Join(toolHiveArgs("http://127.0.0.1:1234/mcp", "5678"), " ")
	for _, want := range []string{"proxy", "--target-uri http://127.0.0.1:1234/mcp", "--port 5678", toolHiveName} {
		if !strings.Contains(got, want) {
			t.Errorf("args %q lack %q", got, want)
		}
	}
}

// TestStartSkipsWhatIsNotInstalled: a peer whose binary is not there is a
// SkipError that says how to install it, and StartAll lists it as skipped
// without calling connect.
func TestStartSkipsWhatIsNotInstalled(t *testing.T) {
	env := Env{Dir: t.TempDir(), NPM: t.TempDir(), Bin: t.TempDir()}
	for _, p := range All {
		_, err := p.Start(context.Background(), env)
		var skip *SkipError
		if !errors.As(err, &skip) || !strings.Contains(err.Error(), p.Install) {
			t.Errorf("%s: %v, want a SkipError naming %q", p.Name, err, p.Install)
		}
	}
	running, skipped := StartAll(context.Background(), env, func(*Running) error {
		t.Error("connect called for a peer that is not installed")
		return nil
	})
	if len(running) != 0 || len(skipped) != len(All) {
		t.Errorf("running %d, skipped %q", len(running), skipped)
	}
}

// TestTable: every hop's rates over direct's and the reverse proxy's, the
// percentiles, the notes and the peers not run.
func TestTable(t *testing.T) {
	var out strings.Builder
	Table(&out, []Result{
		{Name: "direct", Seq: 1000, Fly: 4000, P50: 900 * time.Microsecond, P99: 2 * time.Millisecond, Note: "the server"},
		{Name: "rp", Seq: 800, Fly: 3000, P50: time.Millisecond, P99: 3 * time.Millisecond},
		{Name: "peer", Seq: 400, Fly: 1500, P50: 2500 * time.Microsecond, P99: 9 * time.Millisecond},
	}, []string{"skipping x: not installed"})
	got := out.String()
	for _, want := range []string{
		"| direct | 1000 calls/s | 4000 calls/s | 900 µs | 2000 µs | 1.00x | 1.25x | 1.00x | 1.33x |",
		"| peer | 400 calls/s | 1500 calls/s | 2500 µs | 9000 µs | 0.40x | 0.50x | 0.38x | 0.50x |",
		"- direct: the server",
		"- not run: skipping x: not installed",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
}
