package main

// Policy end to end (policy_*_test.go): what mcptrunk exports, and under
// which names, as the config's policy options say (docs/exports.md, "What is
// exported" and "Names"). Every test runs mcptrunk as a real process over
// stdio, with our example servers and the npm reference servers behind it,
// each option on and off.
//
// This file: the allow/deny filters.

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestPolicyFilters: tools, prompts and resources allow/deny lists export
// exactly what they let through; a filtered tool or prompt cannot be
// reached; a pattern that matches nothing is a warning naming the server and
// the pattern, logged once.
func TestPolicyFilters(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 150*time.Second)

	// What the servers offer directly.
	directEv := startRawEverything(t, ctx)
	directNotes := startRawDirect(t, ctx, "notes", notesBin)
	type lists struct{ tools, prompts, resources, templates []string }
	direct := map[string]lists{}
	for name, c := range map[string]*rawConn{"everything": directEv, "notes": directNotes} {
		direct[name] = lists{
			tools:     sortedKeys(settledTools(t, ctx, c, 1)),
			prompts:   sortedKeysOf(t, c.list(ctx, "prompts/list", "prompts"), "name"),
			resources: sortedKeysOf(t, c.list(ctx, "resources/list", "resources"), "uri"),
			templates: sortedKeysOf(t, c.list(ctx, "resources/templates/list", "resourceTemplates"), "uriTemplate"),
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
		s := withFields(base, nil)
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
			// Its own deadline: a parallel subtest may wait minutes for a
			// slot (-parallel is GOMAXPROCS), past the parent's.
			ctx := testCtx(t, 150*time.Second)
			servers := map[string]server{"notes": notesServer(), "everything": everythingServer(t, nil)}
			if on {
				servers = map[string]server{"notes": entry("notes", notesServer()), "everything": entry("everything", everythingServer(t, nil))}
			}
			trunk := startRawTrunk(t, ctx, writeConfig(t, servers, waitingForAll(nil)))

			var want lists
			want.tools = []string{"mcp__trunk__status", "mcp__trunk__wait_for_servers"}
			want.resources = []string{"mcptrunk://trunk/status"}
			for _, name := range []string{"everything", "notes"} {
				f := filters[name]
				if !on {
					f = map[string]filter{}
				}
				d := direct[name]
				want.tools = append(want.tools, applyFilter(d.tools, f["tools"].allow, f["tools"].deny, toolName(name))...)
				want.prompts = append(want.prompts, applyFilter(d.prompts, f["prompts"].allow, f["prompts"].deny, toolName(name))...)
				want.resources = append(want.resources, applyFilter(d.resources, f["resources"].allow, f["resources"].deny, uri(name))...)
				want.templates = append(want.templates, applyFilter(d.templates, f["resources"].allow, f["resources"].deny, uri(name))...)
			}
			for _, l := range []*[]string{&want.tools, &want.prompts, &want.resources, &want.templates} {
				slices.Sort(*l)
			}
			got := lists{
				tools:     sortedKeys(settledTools(t, ctx, trunk, len(want.tools))),
				prompts:   sortedKeysOf(t, trunk.list(ctx, "prompts/list", "prompts"), "name"),
				resources: sortedKeysOf(t, trunk.list(ctx, "resources/list", "resources"), "uri"),
				templates: sortedKeysOf(t, trunk.list(ctx, "resources/templates/list", "resourceTemplates"), "uriTemplate"),
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
					wantToolRefused(t, ctx, trunk, name, map[string]any{"title": "x", "body": "y", "query": "x", "a": 1, "b": 2})
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
			res, _ := callToolResult(t, ctx, trunk, "mcp__notes__echo", map[string]any{"text": "through the filter"})
			if res.text() != "through the filter" {
				t.Errorf("mcp__notes__echo: %q", res.text())
			}
			res, _ = callToolResult(t, ctx, trunk, "mcp__everything__echo", map[string]any{"message": "hi"})
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
						line, err := waitStderr(ctx, trunk, 10*time.Second, `"`+server+`"`, field, `"`+pattern+`"`, "matches nothing")
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
				// A warning is logged while the catalog is built, before
				// the answer that needed it; once the trunk has exited,
				// its stderr is all there.
				trunk.closeStdin()
				if !trunk.waitExit(procGrace) {
					t.Fatal("the trunk did not exit after stdin EOF")
				}
				if strings.Contains(trunk.stderr.String(), "matches nothing") {
					t.Errorf("a warning about patterns without any filter:\n%s", trunk.stderr.String())
				}
			}
		})
	}
}
