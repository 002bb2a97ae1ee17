package main

// Policy (see policy_filters_test.go): trunk.resourceTools, resources
// reached through tools.

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// listedResources is list_resources' answer.
type listedResources struct {
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
	directEv := startRawEverything(t, ctx)
	directNotes := startRawDirect(t, ctx, "notes", notesBin)
	servers := map[string]server{"notes": notesServer(), "everything": everythingServer(t, nil)}

	t.Run("off", func(t *testing.T) {
		t.Parallel()
		// Its own deadline: a parallel subtest may wait minutes for a
		// slot (-parallel is GOMAXPROCS), past the parent's.
		ctx := testCtx(t, 150*time.Second)
		trunk := startRawTrunk(t, ctx, writeConfig(t, servers, waitingForAll(nil)))
		tools := toolsByName(t, ctx, trunk)
		for _, name := range []string{"mcp__trunk__list_resources", "mcp__trunk__read_resource"} {
			if _, ok := tools[name]; ok {
				t.Errorf("%s is listed without trunk.resourceTools", name)
			}
			wantToolRefused(t, ctx, trunk, name, map[string]any{"uri": "mcptrunk://notes/notes://readme"})
		}
	})

	t.Run("on", func(t *testing.T) {
		t.Parallel()
		// Its own deadline: a parallel subtest may wait minutes for a
		// slot (-parallel is GOMAXPROCS), past the parent's.
		ctx := testCtx(t, 150*time.Second)
		tmp := t.TempDir()
		trunk := startRawTrunkEnv(t, ctx, writeConfig(t, servers, waitingForAll(map[string]any{"resourceTools": true})), "TMPDIR="+tmp)
		tools := toolsByName(t, ctx, trunk)
		for _, name := range []string{"mcp__trunk__list_resources", "mcp__trunk__read_resource"} {
			tool, ok := tools[name]
			if !ok {
				t.Fatalf("%s is not listed; tools: %q", name, sortedKeys(tools))
			}
			if !tool.readOnly() {
				t.Errorf("%s is not marked read-only: %s", name, tool.Annotations)
			}
		}

		// list_resources: every server's resources and templates, each with
		// its server, as resources/list shows them through the trunk.
		listed := func(args map[string]any) listedResources {
			t.Helper()
			res, raw := callToolResult(t, ctx, trunk, "mcp__trunk__list_resources", args)
			var l listedResources
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
		if res, raw := callToolResult(t, ctx, trunk, "mcp__trunk__list_resources", map[string]any{"server": "nosuch"}); !res.IsError || !strings.Contains(res.text(), `"nosuch"`) {
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
			res, raw := callToolResult(t, ctx, trunk, "mcp__trunk__read_resource", args)
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
			res, raw := callToolResult(t, ctx, trunk, "mcp__trunk__read_resource", map[string]any{"uri": "mcptrunk://everything/" + blobURI})
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
			r := callToolResponse(t, ctx, trunk, "mcp__trunk__read_resource", map[string]any{"uri": u})
			var res toolResult
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
