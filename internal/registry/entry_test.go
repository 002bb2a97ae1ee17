package registry

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readEntry(t *testing.T, file string) Entry {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	var e Entry
	if err := json.Unmarshal(data, &e); err != nil {
		t.Fatal(err)
	}
	return e
}

// TestPlanEntry: each kind of server.json becomes the entry a user would
// write, its values as ${VAR} references, never as values.
func TestPlanEntry(t *testing.T) {
	for _, c := range []struct {
		file, entry, via string
		vars             string // name:required, in order
	}{
		{"npm.json", `{"command":"npx","args":["-y","@example/weather-mcp@1.4.2","--units","metric","${DATA_DIR}"],"env":{"WEATHER_API_KEY":"${WEATHER_API_KEY}","WEATHER_REGION":"${WEATHER_REGION:-eu}"}}`,
			"npm @example/weather-mcp@1.4.2", "DATA_DIR:true WEATHER_API_KEY:true WEATHER_DEBUG:false WEATHER_REGION:false"},
		{"pypi.json", `{"command":"uvx","args":["--python","3.12","mcp-server-sqlite==0.9.0","--db-path","${DB}"]}`,
			"pypi mcp-server-sqlite@0.9.0", "DB:true"},
		{"oci.json", `{"command":"docker","args":["run","-i","--rm","-e","GIT_TOKEN","ghcr.io/example/git-mcp:2.0.0"],"env":{"GIT_TOKEN":"${GIT_TOKEN}"}}`,
			"oci ghcr.io/example/git-mcp@2.0.0", "GIT_TOKEN:true"},
		{"remote.json", `{"type":"http","url":"https://${TENANT}.tickets.example.com/mcp","headers":{"Authorization":"Bearer ${API_TOKEN}","X-Region":"${X_REGION:-us}"}}`,
			"remote https://{tenant}.tickets.example.com/mcp", "API_TOKEN:true TENANT:true X_REGION:false"},
	} {
		plan, err := PlanEntry(readEntry(t, c.file).Server)
		if err != nil {
			t.Errorf("%s: %v", c.file, err)
			continue
		}
		got, _ := json.Marshal(plan.Entry)
		if string(got) != c.entry {
			t.Errorf("%s: entry\n got %s\nwant %s", c.file, got, c.entry)
		}
		if plan.Via != c.via {
			t.Errorf("%s: via %q, want %q", c.file, plan.Via, c.via)
		}
		var vars []string
		for _, v := range plan.Variables {
			vars = append(vars, v.Name+":"+map[bool]string{true: "true", false: "false"}[v.Required])
		}
		if strings.Join(vars, " ") != c.vars {
			t.Errorf("%s: variables %q, want %q", c.file, strings.Join(vars, " "), c.vars)
		}
	}
}

// A server with nothing mcptrunk can run says why, naming it and each
// package.
func TestPlanEntryRefuses(t *testing.T) {
	_, err := PlanEntry(readEntry(t, "localhttp.json").Server)
	if err == nil || !strings.Contains(err.Error(), `"io.github.example/local-http"`) || !strings.Contains(err.Error(), "local port") {
		t.Errorf("err = %v", err)
	}
	_, err = PlanEntry(Server{Name: "x/empty"})
	if err == nil || !strings.Contains(err.Error(), "no package and no remote") {
		t.Errorf("err = %v", err)
	}
	_, err = PlanEntry(Server{Name: "x/wasm", Packages: []Package{{RegistryType: "mcpb", Identifier: "x.mcpb"}}})
	if err == nil || !strings.Contains(err.Error(), `"mcpb"`) {
		t.Errorf("err = %v", err)
	}
}
