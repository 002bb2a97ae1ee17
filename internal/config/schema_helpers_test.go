package config

// The config's JSON Schema (docs/config.schema.json), as the schema tests
// read it: decoded for validation, and as plain JSON for walking its
// properties.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

const (
	schemaPath  = "../../docs/config.schema.json"
	examplesDir = "../../docs/examples"
	readmePath  = "../../README.md"
)

// configSchema is the resolved schema, for validation.
func configSchema(t *testing.T) *jsonschema.Resolved {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal(readFile(t, schemaPath), &s); err != nil {
		t.Fatalf("%s: %v", schemaPath, err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("%s: %v", schemaPath, err)
	}
	return rs
}

// schemaNode returns the schema's object at a JSON pointer such as
// "/$defs/server", as plain JSON.
func schemaNode(t *testing.T, pointer string) map[string]any {
	t.Helper()
	var node any
	if err := json.Unmarshal(readFile(t, schemaPath), &node); err != nil {
		t.Fatal(err)
	}
	for _, part := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
		if part == "" {
			continue
		}
		m, _ := node.(map[string]any)
		node = m[part]
	}
	m, ok := node.(map[string]any)
	if !ok {
		t.Fatalf("%s: no object at %s", schemaPath, pointer)
	}
	return m
}

// validate checks a JSON document against the schema.
func validate(t *testing.T, rs *jsonschema.Resolved, data []byte) error {
	t.Helper()
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		return err
	}
	return rs.Validate(doc)
}

// anyEnv expands every variable, so that a documented config parses
// whatever the environment of the test.
func anyEnv(name string) (string, bool) { return "/value/of/" + name, true }

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// readmeConfigs returns the ```json blocks of the README and of the pages
// of docs/, each as a config named by its file and line: a block that is
// an object is one; any other block is members, wrapped in trunk when
// each is a trunk option (`"policy": {...}`), else in mcpServers as
// entries (`"remote": {...}`). A host's config, which
// starts mcptrunk itself, is left out: it is the host's format, not
// mcptrunk's.
func readmeConfigs(t *testing.T) map[string][]byte {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(filepath.Dir(schemaPath), "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	trunkKeys := schemaNode(t, "/$defs/trunk/properties")
	out := map[string][]byte{}
	for _, page := range append([]string{readmePath}, pages...) {
		data := readFile(t, page)
		for _, b := range regexp.MustCompile("(?ms)^```json\n(.*?)^```").FindAllSubmatchIndex(data, -1) {
			body := data[b[2]:b[3]]
			line := 1 + strings.Count(string(data[:b[0]]), "\n")
			name := filepath.Base(page) + ":" + strconv.Itoa(line)
			var obj map[string]json.RawMessage
			if json.Unmarshal(body, &obj) != nil {
				wrap := "mcpServers"
				var members map[string]json.RawMessage
				if json.Unmarshal(append(append([]byte("{"), body...), '}'), &members) == nil && len(members) > 0 {
					wrap = "trunk"
					for k := range members {
						if _, ok := trunkKeys[k]; !ok {
							wrap = "mcpServers"
						}
					}
				}
				body = append(append([]byte(`{"`+wrap+`": {`), body...), "}}"...)
			}
			if !startsMCPTrunk(body) {
				out[name] = body
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s and docs/: found no ```json blocks", readmePath)
	}
	return out
}

// startsMCPTrunk reports whether a config has a server whose command is
// mcptrunk: then it is a host's config.
func startsMCPTrunk(data []byte) bool {
	var c struct {
		MCPServers map[string]struct{ Command string } `json:"mcpServers"`
	}
	_ = json.Unmarshal(data, &c)
	for _, s := range c.MCPServers {
		if base := filepath.Base(s.Command); base == "mcptrunk" || base == "mcptrunk.exe" {
			return true
		}
	}
	return false
}
