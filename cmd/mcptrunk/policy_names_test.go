package main

// Policy (see policy_filters_test.go): exported names, their prefix and
// their length budget.

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

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
			names := sortedKeys(got)
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
		t.Fatalf("notes -long-names lists neither a 100-character name nor \"get.note v2\": %q", sortedKeys(direct["notes"]))
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
				runs[run] = sortedKeys(tools)
				prompts = polKeys(t, trunk.list(ctx, "prompts/list", "prompts"), "name")
				if run == 1 {
					// Every shortened or renamed name routes to its tool.
					for _, server := range append(sortedKeys(servers), "trunk") {
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
