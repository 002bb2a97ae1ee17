package config

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/protocol"
)

// schemaObjects pairs each object of the schema with the struct the parser
// decodes it into: the raw structs are where Parse learns a field's name.
var schemaObjects = map[string]reflect.Type{
	"":                                             reflect.TypeFor[rawConfig](),
	"/$defs/server":                                reflect.TypeFor[rawServer](),
	"/$defs/server/properties/timeouts":            reflect.TypeFor[rawTimeouts](),
	"/$defs/server/properties/oauth":               reflect.TypeFor[rawOAuth](),
	"/$defs/server/properties/credentials":         reflect.TypeFor[rawCredentials](),
	"/$defs/server/properties/breaker":             reflect.TypeFor[rawBreaker](),
	"/$defs/filter":                                reflect.TypeFor[rawFilter](),
	"/$defs/overrides":                             reflect.TypeFor[rawOverrides](),
	"/$defs/toolOverride":                          reflect.TypeFor[rawToolOverride](),
	"/$defs/argumentOverride":                      reflect.TypeFor[rawArgumentOverride](),
	"/$defs/promptOverride":                        reflect.TypeFor[rawPromptOverride](),
	"/$defs/promptArgumentOverride":                reflect.TypeFor[rawPromptArgumentOverride](),
	"/$defs/trunk":                                 reflect.TypeFor[rawTrunk](),
	"/$defs/trunk/properties/audit":                reflect.TypeFor[rawAudit](),
	"/$defs/trunk/properties/codeMode":             reflect.TypeFor[rawCodeMode](),
	"/$defs/trunk/properties/http":                 reflect.TypeFor[rawHTTP](),
	"/$defs/trunk/properties/http/properties/auth": reflect.TypeFor[rawHTTPAuth](),
	"/$defs/trunk/properties/metrics":              reflect.TypeFor[rawMetrics](),
	"/$defs/trunk/properties/policy":               reflect.TypeFor[rawPolicy](),
	"/$defs/trunk/properties/state":                reflect.TypeFor[rawState](),
}

// schemaOnly are properties the schema has and the parser ignores on
// purpose: the same lists the unknown-key warnings skip.
var schemaOnly = map[string][]string{"": configKeys.extra, "/$defs/server": HostEntryKeys}

// TestSchemaMatchesParser: every field the parser reads is in the schema,
// and the schema has no field the parser does not read. A field added to
// a raw struct without its schema entry fails here, as does a raw struct
// this test does not know.
func TestSchemaMatchesParser(t *testing.T) {
	for pointer, typ := range schemaObjects {
		var parsed []string
		for f := range typ.Fields() {
			if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
				parsed = append(parsed, name)
			}
		}
		parsed = append(parsed, schemaOnly[pointer]...)
		props, _ := schemaNode(t, pointer)["properties"].(map[string]any)
		var inSchema []string
		for name := range props {
			inSchema = append(inSchema, name)
		}
		slices.Sort(parsed)
		slices.Sort(inSchema)
		if !slices.Equal(parsed, inSchema) {
			t.Errorf("schema %q has properties %q; the parser's %s reads %q", pointer, inSchema, typ.Name(), parsed)
		}
	}

	// Every raw struct of the package is one of the schema's objects.
	fset := token.NewFileSet()
	sources, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, typ := range schemaObjects {
		known[typ.Name()] = true
	}
	for _, name := range sources {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			if ts, ok := n.(*ast.TypeSpec); ok && strings.HasPrefix(ts.Name.Name, "raw") && !known[ts.Name.Name] {
				if _, isStruct := ts.Type.(*ast.StructType); isStruct {
					t.Errorf("the parser decodes into %s, which is not in schemaObjects: add it with the schema object it reads", ts.Name.Name)
				}
			}
			return true
		})
	}
}

// TestKeySetsMatchSchema: the unknown-key warnings walk exactly the
// objects the schema describes, each with the raw struct the schema test
// holds it to, so a key the schema has is never warned about and one it
// lacks always is.
func TestKeySetsMatchSchema(t *testing.T) {
	walked := map[reflect.Type]bool{}
	var walk func(k *keySet)
	walk = func(k *keySet) {
		if k.raw != nil { // a map's own keys are names; its values are a set
			walked[k.raw] = true
		}
		for _, sub := range k.nested {
			walk(sub)
		}
		if k.values != nil {
			walk(k.values)
		}
	}
	walk(configKeys)
	walk(serverKeys)
	for pointer, typ := range schemaObjects {
		if !walked[typ] {
			t.Errorf("schema object %q (%s) is not checked for unknown keys", pointer, typ.Name())
		}
		delete(walked, typ)
	}
	for typ := range walked {
		t.Errorf("%s is checked for unknown keys but is no schema object", typ.Name())
	}
	// Where the warnings are loose (the top level), the schema allows
	// other keys; everywhere else it does not.
	for pointer := range schemaObjects {
		if pointer == "" {
			continue
		}
		if ap, ok := schemaNode(t, pointer)["additionalProperties"].(bool); !ok || ap {
			t.Errorf("schema object %q allows other keys; mcptrunk warns of them", pointer)
		}
	}
}

// TestSchemaValuesMatchParser: the schema accepts exactly the values the
// parser accepts for transports, revisions, pin modes and durations.
func TestSchemaValuesMatchParser(t *testing.T) {
	server := schemaNode(t, "/$defs/server/properties")
	typePattern := regexp.MustCompile(server["type"].(map[string]any)["pattern"].(string))
	for _, s := range []string{"stdio", "STDIO", "http", "Http", "sse", "streamable-http", "streamableHttp", "streamable_http", "StreamableHTTP", "grpc", "", "streamable--http", "httpx", " stdio"} {
		_, ok := parseTransport(s)
		if typePattern.MatchString(s) != ok {
			t.Errorf("type %q: the schema's pattern matches: %v, the parser accepts: %v", s, !ok, ok)
		}
	}

	enum := func(node map[string]any, field string) []string {
		var out []string
		for _, v := range node[field].(map[string]any)["enum"].([]any) {
			out = append(out, v.(string))
		}
		slices.Sort(out)
		return out
	}
	wantVersions := append([]string{""}, protocol.Supported...)
	slices.Sort(wantVersions)
	if got := enum(server, "protocolVersion"); !slices.Equal(got, wantVersions) {
		t.Errorf("schema protocolVersion enum %q, want \"\" and protocol.Supported %q", got, wantVersions)
	}
	wantPins := []string{"", PinEnforce, PinOff, PinWarn}
	slices.Sort(wantPins)
	if got := enum(schemaNode(t, "/$defs/trunk/properties"), "pin"); !slices.Equal(got, wantPins) {
		t.Errorf("schema pin enum %q, want %q", got, wantPins)
	}

	durPattern := regexp.MustCompile(schemaNode(t, "/$defs/duration")["pattern"].(string))
	for _, s := range []string{"30s", "1m30s", "250ms", "2h", "0", "0s", "1.5h", ".5s", "1.s", "+3s", "10µs", "10us", "1h2m3s4ms5us6ns",
		"30", "-1s", "", "s", "1d", "1 s", "1.2.3s", "- 1s", "++1s"} {
		var d Duration
		raw, _ := json.Marshal(s)
		ok := d.UnmarshalJSON(raw) == nil
		if durPattern.MatchString(s) != ok {
			t.Errorf("duration %q: the schema's pattern matches: %v, the parser accepts: %v", s, !ok, ok)
		}
	}
}

// TestSchemaValidatesConfigs: every config the project shows (the blocks
// of the README and docs/, the test configs meant to be valid, the demo) passes the schema
// and the parser.
func TestSchemaValidatesConfigs(t *testing.T) {
	rs := configSchema(t)
	docs := readmeConfigs(t)
	for _, path := range []string{
		filepath.Join(configDir, "example.json"),
		filepath.Join(configDir, "minimal.json"),
		filepath.Join(configDir, "claude_desktop_config.json"),
		"../../testdata/demo/mcptrunk.json",
	} {
		docs[path] = readFile(t, path)
	}
	for name, data := range docs {
		if err := validate(t, rs, data); err != nil {
			t.Errorf("%s: the schema rejects it: %v\n%s", name, err, data)
		}
		if _, err := Parse(strings.NewReader(string(data)), anyEnv); err != nil {
			t.Errorf("%s: the parser rejects it: %v\n%s", name, err, data)
		}
	}
}

// schemaCannotTell are the invalid test configs the schema accepts: what
// they get wrong is beyond a schema (a duplicate key, the environment, a
// URL's or a glob's syntax), so only the parser reports them.
var schemaCannotTell = []string{
	"bad_duplicate_server.json", "bad_unset_variable.json", "bad_unterminated_variable.json",
	"bad_url_no_host.json", "bad_url_no_scheme.json", "bad_url_parse.json", "bad_url_scheme.json", "bad_glob.json",
}

// TestSchemaRejectsBadConfigs: the schema is not merely permissive. Each
// invalid test config that is JSON fails it as it fails the parser, but
// for those in schemaCannotTell, which must pass it (else the list is
// stale).
func TestSchemaRejectsBadConfigs(t *testing.T) {
	rs := configSchema(t)
	paths, err := filepath.Glob(filepath.Join(configDir, "bad_*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no bad_*.json in %s: %v", configDir, err)
	}
	for _, path := range paths {
		name, data := filepath.Base(path), readFile(t, path)
		if !json.Valid(data) {
			continue // a syntax error: the schema has nothing to check
		}
		err := validate(t, rs, data)
		switch cannot := slices.Contains(schemaCannotTell, name); {
		case cannot && err != nil:
			t.Errorf("%s: the schema rejects it now (%v): take it out of schemaCannotTell", name, err)
		case !cannot && err == nil:
			t.Errorf("%s: the schema accepts it, the parser does not (if no schema can tell, list it in schemaCannotTell)", name)
		}
	}
}
