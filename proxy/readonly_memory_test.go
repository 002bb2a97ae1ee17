package proxy

// readOnlyTools and the read-only mode, end to end through the trunk with
// in-memory servers (moved from cmd/mcptrunk's TestPolicyReadOnlyTools and
// TestPolicyReadOnlyMode, which ran the example and npm servers as
// processes for the same checks).

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/internal/testkit"
	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
)

// readOnlyTools are the definitions of two servers, as they send them:
// read-only or not by their own hint, with odd bytes to keep.
var readOnlyTools = map[string][]string{
	"notes": {
		`{"name":"add_note","description":"adds a <note>","inputSchema":{"type":"object"},"annotations":{"title":"Add", "destructiveHint":true},"x-vendor":[1, 2.50]}`,
		`{"name":"echo","inputSchema":{"type":"object"}}`,
		`{"name":"get_note","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true,"title":"Get"}}`,
	},
	"files": {
		`{"name":"write_file","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":false}}`,
		`{"name":"list_allowed_directories","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`,
	},
}

// readOnlyServers serves readOnlyTools; a call answers "<server>:<name>".
func readOnlyServers() memserver.Set {
	set := memserver.Set{}
	for server, tools := range readOnlyTools {
		s := &memserver.Server{}
		for _, tool := range tools {
			s.Tools = append(s.Tools, json.RawMessage(tool))
		}
		s.Handle = func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
			if method != "tools/call" {
				return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "no %s", method)
			}
			name, _ := rawjson.StringField(params, "name")
			return memserver.Text(server + ":" + name), nil
		}
		set[server] = s
	}
	return set
}

// membersExcept lists an object's members as key=value, the values as
// sent, in order, without the named ones.
func membersExcept(t *testing.T, obj json.RawMessage, except ...string) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(obj))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %s", obj)
	}
	var out []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		if key := tok.(string); !slices.Contains(except, key) {
			out = append(out, key+"="+string(v))
		}
	}
	return out
}

// hintsReadOnly reads annotations.readOnlyHint on its own (not with the
// trunk's reader).
func hintsReadOnly(tool json.RawMessage) bool {
	var d struct {
		Annotations struct {
			ReadOnlyHint bool `json:"readOnlyHint"`
		} `json:"annotations"`
	}
	return json.Unmarshal(tool, &d) == nil && d.Annotations.ReadOnlyHint
}

// A tool named in readOnlyTools reaches the host with
// annotations.readOnlyHint true and every other byte of its definition as
// the server sent it; every other tool is untouched; a name the server
// does not have is a warning; the overridden tool runs as before.
func TestReadOnlyToolsInMemory(t *testing.T) {
	overrides := map[string][]string{"notes": {"add_note", "get_note", "no_such_tool"}, "files": {"write_file"}}
	for _, on := range []bool{false, true} {
		t.Run(map[bool]string{false: "off", true: "on"}[on], func(t *testing.T) {
			specs := map[string]map[string]any{}
			if on {
				for server, names := range overrides {
					specs[server] = map[string]any{"readOnlyTools": names}
				}
			}
			log := &testkit.Buffer{}
			set := readOnlyServers()
			_, h := memTrunk(t, set, specs, nil, &Options{Logger: slog.New(slog.NewTextHandler(io.Writer(log), nil))})
			h.initialize(`{}`)
			through := h.tools()
			for server, tools := range readOnlyTools {
				for _, d := range tools {
					raw := json.RawMessage(d)
					name, _ := rawjson.StringField(raw, "name")
					exported := "mcp__" + server + "__" + name
					got, ok := through[exported]
					if !ok {
						t.Errorf("%s is not exported", exported)
						continue
					}
					if !on || !slices.Contains(overrides[server], name) || hintsReadOnly(raw) {
						if a, b := membersExcept(t, raw, "name"), membersExcept(t, got, "name"); !slices.Equal(a, b) {
							t.Errorf("%s changed:\ndirect:  %s\nthrough: %s", exported, raw, got)
						}
						continue
					}
					if !hintsReadOnly(got) {
						t.Errorf("%s is in readOnlyTools but reaches the host as %s", exported, got)
					}
					if a, b := membersExcept(t, raw, "name", "annotations"), membersExcept(t, got, "name", "annotations"); !slices.Equal(a, b) {
						t.Errorf("%s: members other than annotations changed:\ndirect:  %q\nthrough: %q", exported, a, b)
					}
					if ann := mustField(raw, "annotations"); len(ann) > 2 {
						if a, b := membersExcept(t, ann, "readOnlyHint"), membersExcept(t, mustField(got, "annotations"), "readOnlyHint"); !slices.Equal(a, b) {
							t.Errorf("%s: annotations other than readOnlyHint changed:\ndirect:  %s\nthrough: %s", exported, ann, mustField(got, "annotations"))
						}
					}
				}
			}
			if text, errObj := callText(h, "mcp__notes__add_note", `{}`); text != "notes:add_note" {
				t.Errorf("mcp__notes__add_note: %q %s", text, errObj)
			}
			warned := strings.Contains(log.String(), `readOnlyTools names \"no_such_tool\"`) || strings.Contains(log.String(), `readOnlyTools names "no_such_tool"`)
			if on && !warned {
				t.Errorf("readOnlyTools names a tool notes does not have, but no warning:\n%s", log.String())
			}
			if !on && strings.Contains(log.String(), "readOnlyTools") {
				t.Errorf("a readOnlyTools warning without readOnlyTools:\n%s", log.String())
			}
		})
	}
}

// With trunk.readOnly only tools that are read-only (by the server's hint
// or readOnlyTools) are exported; any other is refused with an error
// naming it and never reaches its server.
func TestReadOnlyModeInMemory(t *testing.T) {
	override := []string{"add_note"}
	for _, on := range []bool{false, true} {
		t.Run(map[bool]string{false: "off", true: "on"}[on], func(t *testing.T) {
			set := readOnlyServers()
			_, h := memTrunk(t, set, map[string]map[string]any{"notes": {"readOnlyTools": override}}, map[string]any{"readOnly": on}, nil)
			h.initialize(`{}`)
			want := []string{"mcp__trunk__status", "mcp__trunk__wait_for_servers"}
			var refused []string
			for server, tools := range readOnlyTools {
				for _, d := range tools {
					name, _ := rawjson.StringField(json.RawMessage(d), "name")
					exported := "mcp__" + server + "__" + name
					if !on || hintsReadOnly(json.RawMessage(d)) || (server == "notes" && slices.Contains(override, name)) {
						want = append(want, exported)
					} else {
						refused = append(refused, exported)
					}
				}
			}
			slices.Sort(want)
			got := h.tools()
			var names []string
			for name, tool := range got {
				names = append(names, name)
				if on && !hintsReadOnly(tool) {
					t.Errorf("read-only mode exports %s: %s", name, tool)
				}
			}
			slices.Sort(names)
			if !slices.Equal(names, want) {
				t.Errorf("tools exported:\n got  %q\n want %q", names, want)
			}
			if on && len(refused) == 0 {
				t.Fatal("no tool is refused: the test proves nothing")
			}
			for _, name := range refused {
				wantRefused(t, h, name)
			}
			// A write happens only when the mode is off.
			text, _ := callText(h, "mcp__files__write_file", `{"path":"x"}`)
			wrote := slices.Contains(set["files"].Received(), "tools/call")
			if on == (text == "files:write_file") || on == wrote {
				t.Errorf("read-only %v: write_file answered %q, reached its server: %v", on, text, wrote)
			}
			for _, name := range []string{"mcp__notes__add_note", "mcp__files__list_allowed_directories"} {
				if text, errObj := callText(h, name, `{}`); !strings.HasSuffix(name, strings.ReplaceAll(text, ":", "__")) {
					t.Errorf("%s: %q %s", name, text, errObj)
				}
			}
		})
	}
}
