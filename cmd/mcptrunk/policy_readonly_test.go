package main

// Policy (see policy_filters_test.go): readOnlyTools and the read-only mode.

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

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
	for _, name := range sortedKeys(direct["everything"]) {
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
	node, _, fsEntry := npmServers(t)
	directFS := startRawDirect(t, ctx, "filesystem", node, fsEntry, root)
	direct := map[string]map[string]polTool{
		"everything": polStableTools(t, ctx, directEv, 1),
		"notes":      polTools(t, ctx, directNotes),
		"filesystem": polStableTools(t, ctx, directFS, 1),
	}
	override := map[string][]string{"notes": {"add_note"}}
	for server, tools := range direct {
		var ro, rw []string
		for _, name := range sortedKeys(tools) {
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
			if !slices.Equal(sortedKeys(got), want) {
				t.Errorf("tools exported:\n got  %q\n want %q", sortedKeys(got), want)
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
