package main

// Policy end to end: what mcptrunk exports, and under which names, as the
// config's policy options say (README "Policy: what is exported" and
// "Names"). Every test runs mcptrunk as a real process over stdio, with our
// example servers and the npm reference servers behind it, each option on
// and off.

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// ---- filters ----

// TestPolicyFilters: tools, prompts and resources allow/deny lists export
// exactly what they let through; a filtered tool or prompt cannot be
// reached; a pattern that matches nothing is a warning naming the server and
// the pattern, logged once.
func TestPolicyFilters(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 150*time.Second)

	// What the servers offer directly.
	directEv := polDirectEverything(t, ctx)
	directNotes := startRawDirect(t, ctx, "notes", notesBin)
	type lists struct{ tools, prompts, resources, templates []string }
	direct := map[string]lists{}
	for name, c := range map[string]*rawConn{"everything": directEv, "notes": directNotes} {
		direct[name] = lists{
			tools:     polSorted(polStableTools(t, ctx, c, 1)),
			prompts:   polKeys(t, c.list(ctx, "prompts/list", "prompts"), "name"),
			resources: polKeys(t, c.list(ctx, "resources/list", "resources"), "uri"),
			templates: polKeys(t, c.list(ctx, "resources/templates/list", "resourceTemplates"), "uriTemplate"),
		}
		if l := direct[name]; len(l.tools) == 0 || len(l.prompts) == 0 || len(l.resources) == 0 || len(l.templates) == 0 {
			t.Fatalf("%s offers too little directly to test filters: %+v", name, l)
		}
	}

	// The filters: each list of each server filtered somehow, and one
	// pattern per field that matches nothing.
	type filter struct{ allow, deny []string }
	filters := map[string]map[string]filter{
		"notes": {
			"tools":     {allow: []string{"*note*", "echo", "nomatch_tool_*"}, deny: []string{"add_*"}},
			"prompts":   {allow: []string{"summarize", "nomatch_prompt"}},
			"resources": {deny: []string{"notes://all", "nomatch://*"}},
		},
		"everything": {
			"tools":     {deny: []string{"get-*", "toggle-*", "nomatch-everything-tool"}},
			"prompts":   {deny: []string{"args-prompt"}},
			"resources": {allow: []string{"demo://resource/static/document/*", "demo://resource/dynamic/text/*"}},
		},
	}
	unmatched := map[string][]string{ // server -> field, pattern, field, pattern...: the patterns that match nothing
		"notes":      {"tools.allow", "nomatch_tool_*", "prompts.allow", "nomatch_prompt", "resources.deny", "nomatch://*"},
		"everything": {"tools.deny", "nomatch-everything-tool"},
	}
	entry := func(name string, base server) server {
		s := polWith(base, nil)
		for field, f := range filters[name] {
			m := map[string]any{}
			if f.allow != nil {
				m["allow"] = f.allow
			}
			if f.deny != nil {
				m["deny"] = f.deny
			}
			s[field] = m
		}
		return s
	}
	toolName := func(server string) func(string) string {
		return func(raw string) string { return "mcp__" + server + "__" + raw }
	}
	uri := func(server string) func(string) string {
		return func(raw string) string { return "mcptrunk://" + server + "/" + raw }
	}

	for _, on := range []bool{false, true} {
		t.Run(map[bool]string{false: "off", true: "on"}[on], func(t *testing.T) {
			t.Parallel()
			servers := map[string]server{"notes": notesServer(), "everything": polEverything(t, nil)}
			if on {
				servers = map[string]server{"notes": entry("notes", notesServer()), "everything": entry("everything", polEverything(t, nil))}
			}
			trunk := startRawTrunk(t, ctx, writeConfig(t, servers, polTrunk(nil)))

			var want lists
			want.tools = []string{"mcp__trunk__status", "mcp__trunk__wait_for_servers"}
			want.resources = []string{"mcptrunk://trunk/status"}
			for _, name := range []string{"everything", "notes"} {
				f := filters[name]
				if !on {
					f = map[string]filter{}
				}
				d := direct[name]
				want.tools = append(want.tools, polExpect(d.tools, f["tools"].allow, f["tools"].deny, toolName(name))...)
				want.prompts = append(want.prompts, polExpect(d.prompts, f["prompts"].allow, f["prompts"].deny, toolName(name))...)
				want.resources = append(want.resources, polExpect(d.resources, f["resources"].allow, f["resources"].deny, uri(name))...)
				want.templates = append(want.templates, polExpect(d.templates, f["resources"].allow, f["resources"].deny, uri(name))...)
			}
			for _, l := range []*[]string{&want.tools, &want.prompts, &want.resources, &want.templates} {
				slices.Sort(*l)
			}
			got := lists{
				tools:     polSorted(polStableTools(t, ctx, trunk, len(want.tools))),
				prompts:   polKeys(t, trunk.list(ctx, "prompts/list", "prompts"), "name"),
				resources: polKeys(t, trunk.list(ctx, "resources/list", "resources"), "uri"),
				templates: polKeys(t, trunk.list(ctx, "resources/templates/list", "resourceTemplates"), "uriTemplate"),
			}
			for _, c := range []struct {
				what      string
				got, want []string
			}{{"tools", got.tools, want.tools}, {"prompts", got.prompts, want.prompts}, {"resources", got.resources, want.resources}, {"templates", got.templates, want.templates}} {
				if !slices.Equal(c.got, c.want) {
					t.Errorf("%s exported:\n got  %q\n want %q", c.what, c.got, c.want)
				}
			}
			t.Logf("exported %d tools, %d prompts, %d resources, %d templates", len(got.tools), len(got.prompts), len(got.resources), len(got.templates))

			// Whatever is filtered cannot be reached; what is left works.
			if on {
				for _, name := range []string{"mcp__notes__add_note", "mcp__notes__search", "mcp__everything__get-sum", "mcp__everything__toggle-simulated-logging"} {
					polWantRefused(t, ctx, trunk, name, map[string]any{"title": "x", "body": "y", "query": "x", "a": 1, "b": 2})
				}
				for _, name := range []string{"mcp__notes__daily_review", "mcp__everything__args-prompt"} {
					r := trunk.call(ctx, "prompts/get", map[string]any{"name": name, "arguments": map[string]string{"city": "x"}})
					if r.Err == nil || !strings.Contains(r.Err.Message, name) {
						t.Errorf("prompts/get %s: %v (result %s), want a JSON-RPC error naming the prompt", name, r.Err, r.Result)
					}
				}
				// A filtered resource is not listed; reading it anyway must
				// not bypass the filter either, as a filtered tool or prompt
				// cannot be reached.
				t.Run("read_filtered_resource", func(t *testing.T) {
					for _, u := range []string{"mcptrunk://notes/notes://all", "mcptrunk://everything/demo://resource/dynamic/blob/1"} {
						r := trunk.call(ctx, "resources/read", map[string]any{"uri": u})
						if r.Err == nil {
							t.Errorf("resources/read %s: a resource the resources filter hides is still read (%d bytes); want a JSON-RPC error naming it", u, len(r.Result))
						} else if !strings.Contains(r.Err.Message, u) {
							t.Errorf("resources/read %s: error %q does not name the resource", u, r.Err.Message)
						}
					}
				})
				// Resources the filter lets through are read as usual,
				// template ones included.
				if r := trunk.call(ctx, "resources/read", map[string]any{"uri": "mcptrunk://everything/demo://resource/dynamic/text/1"}); r.Err != nil {
					t.Errorf("resources/read of an allowed template resource: %v", r.Err)
				}
			}
			res, _ := polCallResult(t, ctx, trunk, "mcp__notes__echo", map[string]any{"text": "through the filter"})
			if res.text() != "through the filter" {
				t.Errorf("mcp__notes__echo: %q", res.text())
			}
			res, _ = polCallResult(t, ctx, trunk, "mcp__everything__echo", map[string]any{"message": "hi"})
			if !strings.Contains(res.text(), "hi") || res.IsError {
				t.Errorf("mcp__everything__echo: %+v", res)
			}
			if r := trunk.call(ctx, "prompts/get", map[string]any{"name": "mcp__notes__summarize", "arguments": map[string]string{"topic": "x"}}); r.Err != nil {
				t.Errorf("prompts/get mcp__notes__summarize: %v", r.Err)
			}
			if r := trunk.call(ctx, "resources/read", map[string]any{"uri": "mcptrunk://notes/notes://readme"}); r.Err != nil {
				t.Errorf("resources/read notes://readme: %v", r.Err)
			}

			// Patterns that match nothing: one warning each, naming the
			// server and the pattern, and only once however often the
			// catalog is rebuilt or listed.
			if on {
				for server, pairs := range unmatched {
					for i := 0; i < len(pairs); i += 2 {
						field, pattern := pairs[i], pairs[i+1]
						line, err := polWaitStderr(ctx, trunk, 10*time.Second, `"`+server+`"`, field, `"`+pattern+`"`, "matches nothing")
						if err != nil {
							t.Errorf("server %s, %s pattern %q matches nothing but no warning says so: %v", server, field, pattern, err)
							continue
						}
						if !strings.Contains(line, "WRN") && !strings.Contains(strings.ToLower(line), "warn") {
							t.Errorf("the unmatched-pattern line is not a warning: %s", line)
						}
						t.Logf("warned: %s", line)
					}
				}
				// Patterns that do match are not reported.
				for _, p := range []string{`"*note*"`, `"add_*"`, `"get-*"`, `"summarize"`, `"notes://all"`} {
					if strings.Contains(trunk.stderr.String(), p) {
						t.Errorf("pattern %s matches but is reported:\n%s", p, trunk.stderr.String())
					}
				}
				trunk.list(ctx, "tools/list", "tools")
				trunk.list(ctx, "prompts/list", "prompts")
				if n := strings.Count(trunk.stderr.String(), `"nomatch_tool_*"`); n != 1 {
					t.Errorf("the warning about nomatch_tool_* was logged %d times, want once", n)
				}
			} else {
				time.Sleep(200 * time.Millisecond)
				if strings.Contains(trunk.stderr.String(), "matches nothing") {
					t.Errorf("a warning about patterns without any filter:\n%s", trunk.stderr.String())
				}
			}
		})
	}
}

// ---- read-only ----

// TestPolicyReadOnlyTools: a tool named in readOnlyTools reaches the host
// with annotations.readOnlyHint true and every other byte of its definition
// as the server sent it; every other tool is untouched; a name the server
// does not have is a warning.
func TestPolicyReadOnlyTools(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 150*time.Second)

	directEv := polDirectEverything(t, ctx)
	directNotes := startRawDirect(t, ctx, "notes", notesBin)
	direct := map[string]map[string]polTool{
		"everything": polStableTools(t, ctx, directEv, 1),
		"notes":      polTools(t, ctx, directNotes),
	}
	// Pick, from what server-everything declares, a tool it does not mark
	// read-only and one it does.
	var evWritable, evReadOnly string
	for _, name := range polSorted(direct["everything"]) {
		tool := direct["everything"][name]
		if tool.readOnly() && evReadOnly == "" {
			evReadOnly = name
		}
		if !tool.readOnly() && evWritable == "" {
			evWritable = name
		}
	}
	if evWritable == "" || evReadOnly == "" {
		t.Fatalf("server-everything lists no writable (%q) or no read-only (%q) tool", evWritable, evReadOnly)
	}
	if direct["notes"]["add_note"].readOnly() {
		t.Fatalf("notes' add_note is read-only directly: %s", direct["notes"]["add_note"].raw)
	}
	overrides := map[string][]string{
		"everything": {evWritable, evReadOnly},
		"notes":      {"add_note", "no_such_tool"},
	}
	t.Logf("readOnlyTools: %q", overrides)

	for _, on := range []bool{false, true} {
		t.Run(map[bool]string{false: "off", true: "on"}[on], func(t *testing.T) {
			t.Parallel()
			servers := map[string]server{"notes": notesServer(), "everything": polEverything(t, nil)}
			if on {
				servers = map[string]server{
					"notes":      polWith(notesServer(), map[string]any{"readOnlyTools": overrides["notes"]}),
					"everything": polEverything(t, map[string]any{"readOnlyTools": overrides["everything"]}),
				}
			}
			trunk := startRawTrunk(t, ctx, writeConfig(t, servers, polTrunk(nil)))
			through := polStableTools(t, ctx, trunk, len(direct["everything"])+len(direct["notes"])+2)
			for server, tools := range direct {
				for name, d := range tools {
					exported := "mcp__" + server + "__" + name
					got, ok := through[exported]
					if !ok {
						t.Errorf("%s is not exported", exported)
						continue
					}
					overridden := on && slices.Contains(overrides[server], name)
					if !overridden {
						sameExceptField(t, exported, d.raw, got.raw, "name", name, exported)
						continue
					}
					if !got.readOnly() {
						t.Errorf("%s is in readOnlyTools but its annotations are %s", exported, got.Annotations)
					}
					// Every member but name and annotations byte for byte,
					// in order; in annotations every member but readOnlyHint.
					if a, b := polMembersExcept(t, d.raw, "name", "annotations"), polMembersExcept(t, got.raw, "name", "annotations"); !slices.Equal(a, b) {
						t.Errorf("%s: members other than annotations changed:\ndirect:  %q\nthrough: %q", exported, a, b)
					}
					if len(d.Annotations) == 0 {
						continue
					}
					if a, b := polMembersExcept(t, d.Annotations, "readOnlyHint"), polMembersExcept(t, got.Annotations, "readOnlyHint"); !slices.Equal(a, b) {
						t.Errorf("%s: annotations other than readOnlyHint changed:\ndirect:  %s\nthrough: %s", exported, d.Annotations, got.Annotations)
					}
					if d.readOnly() && compact(t, d.raw) != compact(t, got.raw) && !bytesEqualExceptName(t, d.raw, got.raw, name, exported) {
						t.Errorf("%s was read-only already, yet its definition changed", exported)
					}
				}
			}
			// The overridden tool still runs as before.
			res, _ := polCallResult(t, ctx, trunk, "mcp__notes__add_note", map[string]any{"title": "t", "body": "b"})
			if res.IsError || res.text() == "" {
				t.Errorf("mcp__notes__add_note: %+v", res)
			}
			warn := `readOnlyTools names "no_such_tool"`
			if on {
				if _, err := polWaitStderr(ctx, trunk, 10*time.Second, `"notes"`, warn); err != nil {
					t.Errorf("readOnlyTools names a tool notes does not have, but no warning: %v", err)
				}
			} else if strings.Contains(trunk.stderr.String(), "readOnlyTools") {
				t.Errorf("a readOnlyTools warning without readOnlyTools:\n%s", trunk.stderr.String())
			}
		})
	}
}

// bytesEqualExceptName reports whether two tool definitions differ only in
// their name.
func bytesEqualExceptName(t testing.TB, direct, through []byte, name, exported string) bool {
	t.Helper()
	return slices.Equal(polMembersExcept(t, direct, "name"), polMembersExcept(t, through, "name")) &&
		getString(t, direct, "name") == name && getString(t, through, "name") == exported
}

// TestPolicyReadOnlyMode: with trunk.readOnly only tools that are read-only
// (by the server's hint or readOnlyTools) are exported; any other is
// refused with an error naming it, and does not run.
func TestPolicyReadOnlyMode(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 150*time.Second)
	root := t.TempDir()

	directEv := polDirectEverything(t, ctx)
	directNotes := startRawDirect(t, ctx, "notes", notesBin)
	node, _, fsEntry := polNPM(t)
	directFS := startRawDirect(t, ctx, "filesystem", node, fsEntry, root)
	direct := map[string]map[string]polTool{
		"everything": polStableTools(t, ctx, directEv, 1),
		"notes":      polTools(t, ctx, directNotes),
		"filesystem": polStableTools(t, ctx, directFS, 1),
	}
	override := map[string][]string{"notes": {"add_note"}}
	for server, tools := range direct {
		var ro, rw []string
		for _, name := range polSorted(tools) {
			if tools[name].readOnly() {
				ro = append(ro, name)
			} else {
				rw = append(rw, name)
			}
		}
		t.Logf("%s declares read-only: %q; not read-only: %q", server, ro, rw)
	}

	for _, on := range []bool{false, true} {
		t.Run(map[bool]string{false: "off", true: "on"}[on], func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "root")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			dir, _ = filepath.EvalSymlinks(dir)
			servers := map[string]server{
				"notes":      polWith(notesServer(), map[string]any{"readOnlyTools": override["notes"]}),
				"everything": polEverything(t, nil),
				"filesystem": polFilesystem(t, dir),
			}
			trunk := startRawTrunk(t, ctx, writeConfig(t, servers, polTrunk(map[string]any{"readOnly": on})))

			var want, refused []string
			want = []string{"mcp__trunk__status", "mcp__trunk__wait_for_servers"}
			for server, tools := range direct {
				for name, tool := range tools {
					exported := "mcp__" + server + "__" + name
					if !on || tool.readOnly() || slices.Contains(override[server], name) {
						want = append(want, exported)
					} else {
						refused = append(refused, exported)
					}
				}
			}
			slices.Sort(want)
			slices.Sort(refused)
			got := polStableTools(t, ctx, trunk, 3)
			if !slices.Equal(polSorted(got), want) {
				t.Errorf("tools exported:\n got  %q\n want %q", polSorted(got), want)
			}
			for name, tool := range got {
				if on && !tool.readOnly() {
					t.Errorf("read-only mode exports %s, whose annotations are %s", name, tool.Annotations)
				}
			}
			if on {
				if len(refused) == 0 {
					t.Fatal("no server has a tool that is not read-only: the test proves nothing")
				}
				t.Logf("refused in read-only mode: %q", refused)
				for _, name := range refused {
					polWantRefused(t, ctx, trunk, name, map[string]any{"path": filepath.Join(dir, "written.txt"), "content": "x"})
				}
			}
			// A write through the filesystem server happens only when the
			// mode is off.
			target := filepath.Join(dir, "written.txt")
			r := polCall(t, ctx, trunk, "mcp__filesystem__write_file", map[string]any{"path": target, "content": "written"})
			_, statErr := os.Stat(target)
			if on && (r.Err == nil || statErr == nil) {
				t.Errorf("read-only mode: write_file answered %s / %v and the file exists: %v", r.Result, r.Err, statErr == nil)
			}
			if !on && (r.Err != nil || statErr != nil) {
				t.Errorf("write_file without read-only mode: %v, file: %v", r.Err, statErr)
			}
			// Read-only tools and the overridden one run in both modes.
			res, _ := polCallResult(t, ctx, trunk, "mcp__notes__add_note", map[string]any{"title": "t", "body": "b"})
			if res.IsError {
				t.Errorf("mcp__notes__add_note (readOnlyTools): %+v", res)
			}
			res, _ = polCallResult(t, ctx, trunk, "mcp__filesystem__list_allowed_directories", nil)
			if !strings.Contains(res.text(), dir) {
				t.Errorf("list_allowed_directories: %q, want %s in it", res.text(), dir)
			}
		})
	}
}

// ---- resource tools ----

// polListed is list_resources' answer.
type polListed struct {
	Resources []struct {
		Server   string
		Resource json.RawMessage
	} `json:"resources"`
	Templates []struct {
		Server   string
		Resource json.RawMessage
	} `json:"resourceTemplates"`
	Unavailable []string `json:"unavailable"`
}

// TestPolicyResourceTools: trunk.resourceTools adds list_resources and
// read_resource, which reach every server's resources through tools.
func TestPolicyResourceTools(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 150*time.Second)
	directEv := polDirectEverything(t, ctx)
	directNotes := startRawDirect(t, ctx, "notes", notesBin)
	servers := map[string]server{"notes": notesServer(), "everything": polEverything(t, nil)}

	t.Run("off", func(t *testing.T) {
		t.Parallel()
		trunk := startRawTrunk(t, ctx, writeConfig(t, servers, polTrunk(nil)))
		tools := polTools(t, ctx, trunk)
		for _, name := range []string{"mcp__trunk__list_resources", "mcp__trunk__read_resource"} {
			if _, ok := tools[name]; ok {
				t.Errorf("%s is listed without trunk.resourceTools", name)
			}
			polWantRefused(t, ctx, trunk, name, map[string]any{"uri": "mcptrunk://notes/notes://readme"})
		}
	})

	t.Run("on", func(t *testing.T) {
		t.Parallel()
		tmp := t.TempDir()
		trunk := polStartTrunk(t, ctx, writeConfig(t, servers, polTrunk(map[string]any{"resourceTools": true})), "TMPDIR="+tmp)
		tools := polTools(t, ctx, trunk)
		for _, name := range []string{"mcp__trunk__list_resources", "mcp__trunk__read_resource"} {
			tool, ok := tools[name]
			if !ok {
				t.Fatalf("%s is not listed; tools: %q", name, polSorted(tools))
			}
			if !tool.readOnly() {
				t.Errorf("%s is not marked read-only: %s", name, tool.Annotations)
			}
		}

		// list_resources: every server's resources and templates, each with
		// its server, as resources/list shows them through the trunk.
		listed := func(args map[string]any) polListed {
			t.Helper()
			res, raw := polCallResult(t, ctx, trunk, "mcp__trunk__list_resources", args)
			var l polListed
			if res.IsError || json.Unmarshal(res.StructuredContent, &l) != nil {
				t.Fatalf("list_resources %v: %s", args, raw)
			}
			return l
		}
		throughRes := trunk.list(ctx, "resources/list", "resources")
		throughTpl := trunk.list(ctx, "resources/templates/list", "resourceTemplates")
		wantItems := func(server string, key string, items []json.RawMessage) []string {
			var out []string
			for _, it := range items {
				if server == "" && strings.HasPrefix(getString(t, it, key), "mcptrunk://trunk/") {
					continue
				}
				if server == "" || strings.HasPrefix(getString(t, it, key), "mcptrunk://"+server+"/") {
					out = append(out, compact(t, it))
				}
			}
			slices.Sort(out)
			return out
		}
		gotItems := func(items []struct {
			Server   string
			Resource json.RawMessage
		}, key string) []string {
			var out []string
			for _, it := range items {
				u := getString(t, it.Resource, key)
				if !strings.HasPrefix(u, "mcptrunk://"+it.Server+"/") {
					t.Errorf("list_resources: %s is listed under server %q", u, it.Server)
				}
				out = append(out, compact(t, it.Resource))
			}
			slices.Sort(out)
			return out
		}
		for _, server := range []string{"", "notes", "everything"} {
			args := map[string]any{}
			if server != "" {
				args["server"] = server
			}
			l := listed(args)
			if got, want := gotItems(l.Resources, "uri"), wantItems(server, "uri", throughRes); !slices.Equal(got, want) {
				t.Errorf("list_resources %v resources:\n got  %q\n want %q", args, got, want)
			}
			if got, want := gotItems(l.Templates, "uriTemplate"), wantItems(server, "uriTemplate", throughTpl); !slices.Equal(got, want) {
				t.Errorf("list_resources %v templates:\n got  %q\n want %q", args, got, want)
			}
			t.Logf("list_resources %v: %d resources, %d templates", args, len(l.Resources), len(l.Templates))
		}
		// ... and that is each server's own list, namespaced.
		all := listed(map[string]any{})
		perServer := map[string]int{}
		for _, r := range all.Resources {
			perServer[r.Server]++
		}
		for name, c := range map[string]*rawConn{"everything": directEv, "notes": directNotes} {
			if want := len(c.list(ctx, "resources/list", "resources")); perServer[name] != want {
				t.Errorf("list_resources lists %d resources of %s, it has %d", perServer[name], name, want)
			}
		}
		// An unknown server is an error naming it, not an empty list.
		if res, raw := polCallResult(t, ctx, trunk, "mcp__trunk__list_resources", map[string]any{"server": "nosuch"}); !res.IsError || !strings.Contains(res.text(), `"nosuch"`) {
			t.Errorf("list_resources for an unknown server: %s, want isError naming it", raw)
		}

		// read_resource: text inline, by namespaced URI or by server + URI.
		readme := directNotes.result(ctx, "resources/read", map[string]any{"uri": "notes://readme"})
		var dr struct {
			Contents []struct{ Text, Blob string } `json:"contents"`
		}
		if err := json.Unmarshal(readme, &dr); err != nil || len(dr.Contents) != 1 || dr.Contents[0].Text == "" {
			t.Fatalf("notes://readme directly: %s", readme)
		}
		for _, args := range []map[string]any{
			{"uri": "mcptrunk://notes/notes://readme"},
			{"server": "notes", "uri": "notes://readme"},
		} {
			res, raw := polCallResult(t, ctx, trunk, "mcp__trunk__read_resource", args)
			if res.IsError || res.text() != dr.Contents[0].Text {
				t.Errorf("read_resource %v: %s\nwant the text %q", args, raw, dr.Contents[0].Text)
			}
		}

		// A blob is saved to a temporary file holding the decoded bytes.
		// server-everything stamps its blobs with the time of day, so the
		// file must equal the direct read just before or just after.
		const blobURI = "demo://resource/dynamic/blob/7"
		decoded := func() string {
			raw := directEv.result(ctx, "resources/read", map[string]any{"uri": blobURI})
			var r struct {
				Contents []struct{ Text, Blob *string } `json:"contents"`
			}
			if err := json.Unmarshal(raw, &r); err != nil || len(r.Contents) != 1 || r.Contents[0].Blob == nil {
				t.Fatalf("%s directly: not one blob: %s", blobURI, raw)
			}
			b, err := base64.StdEncoding.DecodeString(*r.Contents[0].Blob)
			if err != nil {
				t.Fatalf("%s directly: %v", blobURI, err)
			}
			return string(b)
		}
		pathRE := regexp.MustCompile(`saved to (\S+)$`)
		var saved []string
		matched := false
		for attempt := 0; attempt < 3 && !matched; attempt++ {
			before := decoded()
			res, raw := polCallResult(t, ctx, trunk, "mcp__trunk__read_resource", map[string]any{"uri": "mcptrunk://everything/" + blobURI})
			after := decoded()
			m := pathRE.FindStringSubmatch(res.text())
			if res.IsError || m == nil {
				t.Fatalf("read_resource of a blob: %s, want the path of a saved file", raw)
			}
			p := m[1]
			saved = append(saved, p)
			t.Cleanup(func() { _ = os.Remove(p) })
			if filepath.Dir(p) != tmp {
				t.Errorf("the blob was saved to %s, not in the temporary directory %s", p, tmp)
			}
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatalf("the saved blob: %v", err)
			}
			if info, err := os.Stat(p); err == nil && info.Mode().Perm()&0o077 != 0 {
				t.Errorf("the saved blob %s has mode %v: readable by others", p, info.Mode().Perm())
			}
			if !strings.HasPrefix(string(data), "Resource 7: This is a base64 blob") {
				t.Errorf("the saved blob holds %q", data)
			}
			matched = string(data) == before || string(data) == after
			if !matched {
				t.Logf("attempt %d: the saved blob %q is neither direct read (%q, %q); the clock moved on, retrying", attempt, data, before, after)
			}
		}
		if !matched {
			t.Errorf("the saved blob never equalled the decoded direct read")
		}
		for _, p := range saved {
			if err := os.Remove(p); err != nil {
				t.Errorf("removing the saved blob: %v", err)
			}
		}
		if left, _ := os.ReadDir(tmp); len(left) > 0 {
			t.Errorf("files left in the trunk's temporary directory: %v", left)
		}

		// A missing resource is a tool error that says to list again.
		for _, u := range []string{
			"mcptrunk://everything/demo://resource/static/document/no-such-file.md",
			"mcptrunk://everything/demo://resource/dynamic/blob/0",
			"mcptrunk://notes/notes://note/999",
			"mcptrunk://nosuch/x://y",
		} {
			r := polCall(t, ctx, trunk, "mcp__trunk__read_resource", map[string]any{"uri": u})
			var res polResult
			if r.Err != nil || json.Unmarshal(r.Result, &res) != nil {
				t.Errorf("read_resource %s: %v %s, want a result with isError", u, r.Err, r.Result)
				continue
			}
			if !res.IsError || !strings.Contains(res.text(), "list_resources") || !strings.Contains(res.text(), u) {
				t.Errorf("read_resource %s: %s, want isError naming the URI and suggesting list_resources", u, r.Result)
			}
		}
	})
}

// ---- tool search ----

// polQuery is one recorded search and the tool it should find.
type polQuery struct{ query, want string }

// polQueries are natural requests over server-everything, server-filesystem,
// notes and weather, each with the tool a person would pick.
var polQueries = []polQuery{
	{"read a text file", "mcp__filesystem__read_text_file"},
	{"list files in a directory", "mcp__filesystem__list_directory"},
	{"weather forecast for a city", "mcp__weather__forecast"},
	{"add two numbers", "mcp__everything__get-sum"},
	{"echo a message back", "mcp__everything__echo"},
	{"search notes", "mcp__notes__search"},
	{"find weather stations in a city", "mcp__weather__search"},
	{"create a new directory", "mcp__filesystem__create_directory"},
	{"move or rename a file", "mcp__filesystem__move_file"},
	{"write content to a file", "mcp__filesystem__write_file"},
	{"get a note by its id", "mcp__notes__get_note"},
	{"add a new note", "mcp__notes__add_note"},
	{"compress a file with gzip", "mcp__everything__gzip-file-as-resource"},
	{"show the environment variables", "mcp__everything__get-env"},
	{"get a tiny image", "mcp__everything__get-tiny-image"},
	{"file size and permissions metadata", "mcp__filesystem__get_file_info"},
	{"edit lines in a text file", "mcp__filesystem__edit_file"},
	{"search for files matching a glob pattern", "mcp__filesystem__search_files"},
	{"recursive tree of a directory", "mcp__filesystem__directory_tree"},
	{"read several files at once", "mcp__filesystem__read_multiple_files"},
}

// polSearchServers is the catalog the search tests and figures run over.
func polSearchServers(t *testing.T, root string) map[string]server {
	return map[string]server{
		"everything": polEverything(t, nil),
		"filesystem": polFilesystem(t, root),
		"notes":      notesServer(),
		"weather":    weatherServer(),
	}
}

// polSearchRoot is a directory for server-filesystem with one file in it.
func polSearchRoot(t *testing.T) (dir, file string) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	file = filepath.Join(dir, "hello.txt")
	if err := os.WriteFile(file, []byte("hello from the policy test\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, file
}

// polSearch runs search_tools and returns the names found, best first.
func polSearch(t testing.TB, ctx context.Context, trunk *rawConn, query string, limit int) ([]string, json.RawMessage) {
	t.Helper()
	res, raw := polCallResult(t, ctx, trunk, "mcp__trunk__search_tools", map[string]any{"query": query, "limit": limit})
	var found struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if res.IsError || json.Unmarshal([]byte(res.text()), &found) != nil {
		t.Fatalf("search_tools %q: %s", query, raw)
	}
	var names []string
	for _, tool := range found.Tools {
		names = append(names, getString(t, tool, "name"))
	}
	return names, raw
}

// TestToolSearch: with trunk.toolSearch the host lists only the trunk's
// tools; search_tools finds the right tool for natural queries, and
// call_tool runs it with the same result as a direct call through a trunk
// without tool search.
func TestToolSearch(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 150*time.Second)
	root, file := polSearchRoot(t)
	servers := polSearchServers(t, root)
	search := polStartTrunk(t, ctx, writeConfig(t, servers, polTrunk(map[string]any{"toolSearch": true})))
	plain := polStartTrunk(t, ctx, writeConfig(t, servers, polTrunk(nil)))

	// On: only the trunk's own tools are listed.
	want := []string{"mcp__trunk__call_tool", "mcp__trunk__search_tools", "mcp__trunk__status", "mcp__trunk__wait_for_servers"}
	if got := polSorted(polTools(t, ctx, search)); !slices.Equal(got, want) {
		t.Errorf("tools/list with toolSearch: %q, want %q", got, want)
	}
	// Off: every tool, and no search tools.
	all := polStableTools(t, ctx, plain, 20)
	for _, name := range []string{"mcp__trunk__call_tool", "mcp__trunk__search_tools"} {
		if _, ok := all[name]; ok {
			t.Errorf("%s is listed without toolSearch", name)
		}
	}
	for _, q := range polQueries {
		if _, ok := all[q.want]; !ok {
			t.Fatalf("the expected tool %s of %q does not exist; tools: %q", q.want, q.query, polSorted(all))
		}
	}

	// Every query finds its tool in the top 3; the ranks are logged for
	// docs/context.md.
	var table strings.Builder
	table.WriteString("| query | expected tool | rank | top 3 |\n|---|---|---|---|\n")
	top3 := 0
	for _, q := range polQueries {
		names, _ := polSearch(t, ctx, search, q.query, 10)
		rank := slices.Index(names, q.want) + 1
		if rank >= 1 && rank <= 3 {
			top3++
		} else {
			t.Errorf("search_tools %q: %s is at rank %d (0: not in the top 10), want top 3; got %q", q.query, q.want, rank, names)
		}
		fmt.Fprintf(&table, "| %s | `%s` | %d | %s |\n", q.query, q.want, rank, "`"+strings.Join(names[:min(3, len(names))], "`, `")+"`")
	}
	t.Logf("search ranks (%d of %d queries in the top 3):\n%s", top3, len(polQueries), table.String())

	// The definitions search_tools returns are the ones tools/list gives
	// without tool search, and limit bounds the answer.
	names, raw := polSearch(t, ctx, search, "file", 2)
	if len(names) != 2 {
		t.Errorf("search_tools limit 2: %d tools: %s", len(names), raw)
	}
	var found struct {
		Tools []json.RawMessage `json:"tools"`
	}
	res, _ := polCallResult(t, ctx, search, "mcp__trunk__search_tools", map[string]any{"query": "read a text file"})
	if err := json.Unmarshal([]byte(res.text()), &found); err != nil || len(found.Tools) == 0 {
		t.Fatalf("search_tools: %v", err)
	}
	for _, tool := range found.Tools {
		name := getString(t, tool, "name")
		if compact(t, tool) != compact(t, all[name].raw) {
			t.Errorf("search_tools returns %s as\n%s\nbut tools/list without search lists\n%s", name, tool, all[name].raw)
		}
	}
	if r := polCall(t, ctx, search, "mcp__trunk__search_tools", map[string]any{}); r.Err == nil {
		var res polResult
		if json.Unmarshal(r.Result, &res) != nil || !res.IsError {
			t.Errorf("search_tools without a query: %s, want isError", r.Result)
		}
	}

	// call_tool runs what search found, with the result of a plain call.
	for _, c := range []struct {
		name string
		args map[string]any
	}{
		{"mcp__everything__get-sum", map[string]any{"a": 2, "b": 40}},
		{"mcp__everything__echo", map[string]any{"message": "through call_tool"}},
		{"mcp__weather__forecast", map[string]any{"city": "Oslo", "days": 2}},
		{"mcp__notes__search", map[string]any{"query": "proxy"}},
		{"mcp__filesystem__read_text_file", map[string]any{"path": file}},
	} {
		_, viaSearch := polCallResult(t, ctx, search, "mcp__trunk__call_tool", map[string]any{"name": c.name, "arguments": c.args})
		_, viaPlain := polCallResult(t, ctx, plain, c.name, c.args)
		if compact(t, viaSearch) != compact(t, viaPlain) {
			t.Errorf("%s: call_tool gives\n%s\na plain call\n%s", c.name, viaSearch, viaPlain)
		}
	}
	// A tool without arguments: call_tool without "arguments" is a plain
	// tools/call without them, not one with "arguments": null.
	for _, callArgs := range []string{`{"name":"mcp__everything__get-tiny-image"}`, `{"name":"mcp__everything__get-tiny-image","arguments":null}`, `{"name":"mcp__notes__rich"}`} {
		name := getString(t, []byte(callArgs), "name")
		viaSearch := search.call(ctx, "tools/call", `{"name":"mcp__trunk__call_tool","arguments":`+callArgs+`}`)
		viaPlain := plain.call(ctx, "tools/call", map[string]any{"name": name})
		if viaSearch.Err != nil || viaPlain.Err != nil {
			t.Errorf("%s without arguments: call_tool %v, a plain call %v", name, viaSearch.Err, viaPlain.Err)
		} else if compact(t, viaSearch.Result) != compact(t, viaPlain.Result) {
			t.Errorf("%s without arguments: call_tool gives\n%s\na plain call\n%s", name, viaSearch.Result, viaPlain.Result)
		}
	}
	// call_tool refuses what is not exported, naming it.
	r := polCall(t, ctx, search, "mcp__trunk__call_tool", map[string]any{"name": "mcp__notes__nope", "arguments": map[string]any{}})
	var refusal string
	if r.Err != nil {
		refusal = r.Err.Message
	} else {
		var res polResult
		_ = json.Unmarshal(r.Result, &res)
		if !res.IsError {
			t.Errorf("call_tool of an unknown tool: %s", r.Result)
		}
		refusal = res.text()
	}
	if !strings.Contains(refusal, "mcp__notes__nope") {
		t.Errorf("call_tool of an unknown tool: %q does not name it", refusal)
	}
}

// ---- prefix ----

// TestPolicyPrefix: trunk.prefix "" gives <server>__<name>, which routes;
// the default gives mcp__<server>__<name>.
func TestPolicyPrefix(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 150*time.Second)
	directEv := polDirectEverything(t, ctx)
	evTools := polStableTools(t, ctx, directEv, 1)
	directNotes := startRawDirect(t, ctx, "notes", notesBin)
	notesTools := polTools(t, ctx, directNotes)
	for _, c := range []struct {
		name   string
		trunk  map[string]any
		prefix string
	}{
		{"default", nil, "mcp__"},
		{"empty", map[string]any{"prefix": ""}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			servers := map[string]server{"notes": notesServer(), "weather": weatherServer(), "everything": polEverything(t, nil)}
			trunk := startRawTrunk(t, ctx, writeConfig(t, servers, polTrunk(c.trunk)))
			got := polStableTools(t, ctx, trunk, len(evTools)+len(notesTools))
			names := polSorted(got)
			for _, n := range names {
				server, _, ok := strings.Cut(strings.TrimPrefix(n, c.prefix), "__")
				if !strings.HasPrefix(n, c.prefix) || !ok || !slices.Contains([]string{"trunk", "notes", "weather", "everything"}, server) {
					t.Errorf("tool %q is not %s<server>__<name>", n, c.prefix)
				}
				if c.prefix == "" && strings.HasPrefix(n, "mcp__") {
					t.Errorf("tool %q carries mcp__ with prefix \"\"", n)
				}
			}
			for name := range evTools {
				if _, ok := got[c.prefix+"everything__"+name]; !ok {
					t.Errorf("%severything__%s is missing", c.prefix, name)
				}
			}
			for name := range notesTools {
				if _, ok := got[c.prefix+"notes__"+name]; !ok {
					t.Errorf("%snotes__%s is missing", c.prefix, name)
				}
			}
			prompts := polKeys(t, trunk.list(ctx, "prompts/list", "prompts"), "name")
			if !slices.Contains(prompts, c.prefix+"notes__summarize") || !slices.Contains(prompts, c.prefix+"weather__plan_trip") {
				t.Errorf("prompts: %q", prompts)
			}

			// The names route, tools, prompts and the trunk's own.
			res, _ := polCallResult(t, ctx, trunk, c.prefix+"notes__echo", map[string]any{"text": "prefixed"})
			if res.text() != "prefixed" {
				t.Errorf("%snotes__echo: %q", c.prefix, res.text())
			}
			res, _ = polCallResult(t, ctx, trunk, c.prefix+"everything__echo", map[string]any{"message": "prefixed"})
			if res.IsError || !strings.Contains(res.text(), "prefixed") {
				t.Errorf("%severything__echo: %+v", c.prefix, res)
			}
			res, _ = polCallResult(t, ctx, trunk, c.prefix+"weather__search", map[string]any{"city": "os"})
			if res.IsError || res.text() == "" {
				t.Errorf("%sweather__search: %+v", c.prefix, res)
			}
			res, _ = polCallResult(t, ctx, trunk, c.prefix+"trunk__status", nil)
			if res.IsError || !strings.Contains(res.text(), `"everything"`) {
				t.Errorf("%strunk__status: %+v", c.prefix, res)
			}
			if r := trunk.call(ctx, "prompts/get", map[string]any{"name": c.prefix + "notes__summarize", "arguments": map[string]string{"topic": "x"}}); r.Err != nil {
				t.Errorf("prompts/get %snotes__summarize: %v", c.prefix, r.Err)
			}
			// The other scheme does not route.
			other := "notes__echo"
			if c.prefix == "" {
				other = "mcp__notes__echo"
			}
			polWantRefused(t, ctx, trunk, other, map[string]any{"text": "x"})
		})
	}
}

// ---- name budget ----

// polShortened is the documented shortened name: the sanitized name cut so
// that the whole name is exactly budget long, then "_" and the first 8 hex
// digits of sha256(raw) (naming.Assign, level 1).
func polShortened(prefix, server, raw string, budget int) string {
	base := prefix + server + "__"
	sum := sha256.Sum256([]byte(raw))
	tag := "_" + hex.EncodeToString(sum[:])[:8]
	clean := regexp.MustCompile(`[^A-Za-z0-9_-]`).ReplaceAllString(raw, "_")
	return base + clean[:budget-len(base)-len(tag)] + tag
}

var polLegalName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// TestNameBudget: with notes -long-names (a 100-character tool name and
// "get.note v2") every exported name fits the budget (64 by default, and
// 40) in [A-Za-z0-9_-], every shortened name routes, the names are the same
// on two separate runs, and "get.note v2" becomes get_note_v2.
func TestNameBudget(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 150*time.Second)
	directNotes := startRawDirect(t, ctx, "notes", notesBin, "-long-names")
	directEv := polDirectEverything(t, ctx)
	direct := map[string]map[string]polTool{
		"notes":      polTools(t, ctx, directNotes),
		"everything": polStableTools(t, ctx, directEv, 1),
	}
	longName := ""
	for name := range direct["notes"] {
		if len(name) == 100 {
			longName = name
		}
	}
	if longName == "" || direct["notes"]["get.note v2"].Name == "" {
		t.Fatalf("notes -long-names lists neither a 100-character name nor \"get.note v2\": %q", polSorted(direct["notes"]))
	}
	wantNote, _ := polCallResult(t, ctx, directNotes, "get_note", map[string]any{"id": "1"})

	// The trunk's own tools, by upstream-style name.
	direct["trunk"] = map[string]polTool{"status": {}, "wait_for_servers": {}}
	// Arguments that make each tool that may be shortened run.
	args := map[string]map[string]any{
		longName:                         {"id": "1"},
		"get.note v2":                    {"id": "1"},
		"trigger-long-running-operation": {"duration": 0.2, "steps": 1},
		"wait_for_servers":               {"timeoutSeconds": 0},
	}

	for _, c := range []struct {
		name       string
		budget     int // 0: the default
		prefix     *string
		everything bool
	}{
		{"default", 0, nil, false},
		{"budget40", 40, nil, true},
		// A long prefix under the smallest budget: the trunk's own
		// wait_for_servers no longer fits as it is.
		{"budget32_longprefix", 32, polPtr("mcptrunk__"), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			servers := map[string]server{"notes": notesServer("-long-names"), "weather": weatherServer()}
			if c.everything {
				servers["everything"] = polEverything(t, nil)
			}
			trunkOpts := map[string]any{}
			limit, prefix := 64, "mcp__"
			if c.budget != 0 {
				trunkOpts["maxNameLength"] = c.budget
				limit = c.budget
			}
			if c.prefix != nil {
				trunkOpts["prefix"] = *c.prefix
				prefix = *c.prefix
			}
			cfg := writeConfig(t, servers, polTrunk(trunkOpts))
			var runs [2][]string
			var tools map[string]polTool
			var prompts []string
			for run := range runs {
				trunk := startRawTrunk(t, ctx, cfg)
				tools = polStableTools(t, ctx, trunk, len(direct["notes"]))
				runs[run] = polSorted(tools)
				prompts = polKeys(t, trunk.list(ctx, "prompts/list", "prompts"), "name")
				if run == 1 {
					// Every shortened or renamed name routes to its tool.
					for _, server := range append(polSorted(servers), "trunk") {
						if server == "weather" {
							continue
						}
						for raw := range direct[server] {
							plain := prefix + server + "__" + raw
							exported := plain
							if len(plain) > limit {
								exported = polShortened(prefix, server, raw, limit)
							} else if raw == "get.note v2" {
								exported = prefix + "notes__get_note_v2"
							}
							if _, ok := tools[exported]; !ok {
								t.Errorf("%s %q: %s is not exported; tools: %q", server, raw, exported, runs[run])
								continue
							}
							if exported == plain {
								continue
							}
							res, rawRes := polCallResult(t, ctx, trunk, exported, args[raw])
							if res.IsError {
								t.Errorf("%s (%s %q): %s", exported, server, raw, rawRes)
							}
							if server == "notes" && res.text() != wantNote.text() {
								t.Errorf("%s: %q, want get_note's %q", exported, res.text(), wantNote.text())
							}
							t.Logf("%s %q -> %s (%d characters) routes", server, raw, exported, len(exported))
						}
					}
					if _, ok := tools[prefix+"notes__get_note_v2"]; !ok {
						t.Errorf("\"get.note v2\" is not exported as %snotes__get_note_v2: %q", prefix, runs[run])
					}
					polWantRefused(t, ctx, trunk, prefix+"notes__get.note v2", map[string]any{"id": "1"})
				}
				trunk.shutdown(15 * time.Second)
			}
			for _, name := range append(append([]string{}, runs[0]...), prompts...) {
				if len(name) > limit {
					t.Errorf("%s is %d characters, over the budget of %d", name, len(name), limit)
				}
				if !polLegalName.MatchString(name) {
					t.Errorf("%q has characters outside [A-Za-z0-9_-]", name)
				}
			}
			if !slices.Equal(runs[0], runs[1]) {
				t.Errorf("two runs exported different names:\n%q\n%q", runs[0], runs[1])
			}
		})
	}
}

func polPtr[T any](v T) *T { return &v }

// ---- context size ----

// TestContextSizeFigures measures what the host's context pays for the
// tools list: the bytes of the tools/list result, and tokens approximated as
// ceil(bytes/4) (a rule of thumb for English and JSON with common
// tokenizers, not any model's count), for server-everything,
// server-filesystem, notes and weather, directly and through mcptrunk with
// and without toolSearch. It asserts only sanity; the table is logged for
// docs/context.md.
func TestContextSizeFigures(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 150*time.Second)
	root, _ := polSearchRoot(t)
	servers := polSearchServers(t, root)
	node, everything, filesystem := polNPM(t)
	directs := map[string]*rawConn{
		"everything": startRawDirect(t, ctx, "everything", node, everything, "stdio"),
		"filesystem": startRawDirect(t, ctx, "filesystem", node, filesystem, root),
		"notes":      startRawDirect(t, ctx, "notes", notesBin),
		"weather":    startRawDirect(t, ctx, "weather", weatherBin),
	}
	full := polStartTrunk(t, ctx, writeConfig(t, servers, polTrunk(nil)))
	search := polStartTrunk(t, ctx, writeConfig(t, servers, polTrunk(map[string]any{"toolSearch": true})))

	// size lists tools once (one page), after the list has settled.
	size := func(c *rawConn) (bytes, tools int) {
		polStableTools(t, ctx, c, 1)
		res := c.result(ctx, "tools/list", nil)
		var r struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor string            `json:"nextCursor"`
		}
		if err := json.Unmarshal(res, &r); err != nil || r.NextCursor != "" {
			t.Fatalf("%s: tools/list is not one page: %v", c.name, err)
		}
		return len(res), len(r.Tools)
	}
	tokens := func(b int) int { return (b + 3) / 4 }

	var table strings.Builder
	table.WriteString("| tools/list of | tools | bytes | ≈ tokens (bytes/4) |\n|---|---:|---:|---:|\n")
	row := func(what string, b, n int) {
		fmt.Fprintf(&table, "| %s | %d | %d | %d |\n", what, n, b, tokens(b))
	}
	sumBytes, sumTools := 0, 0
	for _, name := range []string{"everything", "filesystem", "notes", "weather"} {
		b, n := size(directs[name])
		sumBytes += b
		sumTools += n
		row(name+" (directly)", b, n)
	}
	row("the four, directly, summed", sumBytes, sumTools)
	fullBytes, fullTools := size(full)
	row("mcptrunk, every tool", fullBytes, fullTools)
	searchBytes, searchTools := size(search)
	row("mcptrunk, toolSearch", searchBytes, searchTools)

	// What one search costs when the model does look for a tool.
	// The answer carries the definitions once, as JSON text.
	found, answer := polCallResult(t, ctx, search, "mcp__trunk__search_tools", map[string]any{"query": "read a text file"})
	var hits struct {
		Tools []json.RawMessage `json:"tools"`
	}
	_ = json.Unmarshal([]byte(found.text()), &hits)
	fmt.Fprintf(&table, "| one search_tools answer (default limit, %q) | %d | %d | %d |\n", "read a text file", len(hits.Tools), len(answer), tokens(len(answer)))
	t.Logf("tools/list sizes (tokens ≈ ceil(bytes/4)):\n%s\ntoolSearch saves %d bytes (≈ %d tokens, %.0f%%) of every request's context",
		table.String(), fullBytes-searchBytes, tokens(fullBytes)-tokens(searchBytes), 100*float64(fullBytes-searchBytes)/float64(fullBytes))

	if searchBytes >= fullBytes {
		t.Errorf("search mode lists %d bytes, the full list %d: it should be smaller", searchBytes, fullBytes)
	}
	if searchTools != 4 {
		t.Errorf("search mode lists %d tools, want the trunk's 4", searchTools)
	}
	if fullTools != sumTools+2 {
		t.Errorf("the full list has %d tools, the servers %d plus the trunk's 2", fullTools, sumTools)
	}
	if fullBytes < sumBytes {
		t.Errorf("the full list (%d bytes) is smaller than the servers' lists together (%d): something is missing", fullBytes, sumBytes)
	}
}
