package proxy

// trunk.resourceTools end to end through the trunk with in-memory servers
// (moved from cmd/mcptrunk's TestPolicyResourceTools, which ran notes and
// server-everything as processes for the same checks): list_resources and
// read_resource reach every server's resources through tools.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
)

// resourceBlob is the bytes of the blob resource everything serves.
const resourceBlob = "Resource 7: This is a base64 blob"

// resourceServers are two servers in the shape of notes and
// server-everything as far as resources go: notes with text resources and
// a template, everything with a text resource, a blob and a template. A
// URI neither has is an error, as the servers answer it.
func resourceServers() memserver.Set {
	serve := func(resources []json.RawMessage, templates []json.RawMessage, contents map[string]string) *memserver.Server {
		return &memserver.Server{
			Resources: resources, Templates: templates,
			Handle: func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
				uri, _ := rawjson.StringField(params, "uri")
				if method != "resources/read" {
					return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "no %s", method)
				}
				content, ok := contents[uri]
				if !ok {
					return nil, jsonrpc.Errorf(-32002, "resource %s not found", uri)
				}
				return json.RawMessage(`{"contents":[` + content + `]}`), nil
			},
		}
	}
	raw := func(items ...string) []json.RawMessage {
		var out []json.RawMessage
		for _, it := range items {
			out = append(out, json.RawMessage(it))
		}
		return out
	}
	blob := base64.StdEncoding.EncodeToString([]byte(resourceBlob))
	return memserver.Set{
		"notes": serve(
			raw(`{"uri":"notes://readme","name":"readme","mimeType":"text/plain"}`, `{"uri":"notes://all","name":"all"}`),
			raw(`{"uriTemplate":"notes://note/{id}","name":"note"}`),
			map[string]string{
				"notes://readme": `{"uri":"notes://readme","mimeType":"text/plain","text":"Notes: read me first."}`,
				"notes://all":    `{"uri":"notes://all","text":"1 roadmap\n2 tea"}`,
			}),
		"everything": serve(
			raw(`{"uri":"demo://resource/static/document/architecture.md","name":"architecture.md"}`),
			raw(`{"uriTemplate":"demo://resource/dynamic/blob/{index}","name":"blob"}`),
			map[string]string{
				"demo://resource/static/document/architecture.md": `{"uri":"demo://resource/static/document/architecture.md","text":"# Architecture"}`,
				"demo://resource/dynamic/blob/7":                  `{"uri":"demo://resource/dynamic/blob/7","mimeType":"application/octet-stream","blob":"` + blob + `"}`,
			}),
	}
}

// resourceToolResult is a tools/call result of the resource tools.
type resourceToolResult struct {
	Content []struct {
		Type, Text string
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
}

func (r resourceToolResult) text() string {
	var parts []string
	for _, c := range r.Content {
		if c.Type == "text" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// callResourceTool calls a tool and decodes its result, failing on a
// JSON-RPC error.
func callResourceTool(t *testing.T, h *memHost, name, args string) (resourceToolResult, json.RawMessage) {
	t.Helper()
	res, errObj := h.call("tools/call", `{"name":"`+name+`","arguments":`+args+`}`)
	var r resourceToolResult
	if errObj != nil || json.Unmarshal(res, &r) != nil {
		t.Fatalf("tools/call %s %s: %s %s", name, args, res, errObj)
	}
	return r, res
}

// listItems lists a list method's items through the trunk (one page).
func listItems(t *testing.T, h *memHost, method, field string) []json.RawMessage {
	t.Helper()
	res, errObj := h.call(method, `{}`)
	var page map[string][]json.RawMessage
	if errObj != nil || json.Unmarshal(res, &page) != nil {
		t.Fatalf("%s: %s %s", method, res, errObj)
	}
	return page[field]
}

func TestResourceToolsOff(t *testing.T) {
	_, h := memTrunk(t, resourceServers(), nil, nil, nil)
	h.initialize(`{}`)
	tools := h.tools()
	for _, name := range []string{"mcp__trunk__list_resources", "mcp__trunk__read_resource"} {
		if _, ok := tools[name]; ok {
			t.Errorf("%s is listed without trunk.resourceTools", name)
		}
		wantRefused(t, h, name)
	}
}

func TestResourceToolsInMemory(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where read_resource saves a blob
	set := resourceServers()
	_, h := memTrunk(t, set, nil, map[string]any{"resourceTools": true}, nil)
	h.initialize(`{}`)
	tools := h.tools()
	for _, name := range []string{"mcp__trunk__list_resources", "mcp__trunk__read_resource"} {
		tool, ok := tools[name]
		if !ok {
			t.Fatalf("%s is not listed; tools: %q", name, h.toolNames())
		}
		if !strings.Contains(string(tool), `"readOnlyHint":true`) {
			t.Errorf("%s is not marked read-only: %s", name, tool)
		}
	}

	// list_resources: every server's resources and templates, each with
	// its server, as resources/list shows them through the trunk.
	type listed struct {
		Resources, Templates []struct {
			Server   string
			Resource json.RawMessage
		}
	}
	list := func(args string) listed {
		t.Helper()
		res, raw := callResourceTool(t, h, "mcp__trunk__list_resources", args)
		var l struct {
			Resources []struct {
				Server   string
				Resource json.RawMessage
			} `json:"resources"`
			Templates []struct {
				Server   string
				Resource json.RawMessage
			} `json:"resourceTemplates"`
		}
		if res.IsError || json.Unmarshal(res.StructuredContent, &l) != nil {
			t.Fatalf("list_resources %s: %s", args, raw)
		}
		return listed{l.Resources, l.Templates}
	}
	throughRes := listItems(t, h, "resources/list", "resources")
	throughTpl := listItems(t, h, "resources/templates/list", "resourceTemplates")
	wantItems := func(server, key string, items []json.RawMessage) []string {
		var out []string
		for _, it := range items {
			u, _ := rawjson.StringField(it, key)
			if server == "" && strings.HasPrefix(u, "mcptrunk://trunk/") {
				continue
			}
			if server == "" || strings.HasPrefix(u, "mcptrunk://"+server+"/") {
				out = append(out, string(it))
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
			u, _ := rawjson.StringField(it.Resource, key)
			if !strings.HasPrefix(u, "mcptrunk://"+it.Server+"/") {
				t.Errorf("list_resources: %s is listed under server %q", u, it.Server)
			}
			out = append(out, string(it.Resource))
		}
		slices.Sort(out)
		return out
	}
	for _, server := range []string{"", "notes", "everything"} {
		args := `{}`
		if server != "" {
			args = `{"server":"` + server + `"}`
		}
		l := list(args)
		if got, want := gotItems(l.Resources, "uri"), wantItems(server, "uri", throughRes); len(want) == 0 || !slices.Equal(got, want) {
			t.Errorf("list_resources %s resources:\n got  %q\n want %q", args, got, want)
		}
		if got, want := gotItems(l.Templates, "uriTemplate"), wantItems(server, "uriTemplate", throughTpl); len(want) == 0 || !slices.Equal(got, want) {
			t.Errorf("list_resources %s templates:\n got  %q\n want %q", args, got, want)
		}
	}
	// ... and that is each server's own list, namespaced.
	perServer := map[string]int{}
	for _, r := range list(`{}`).Resources {
		perServer[r.Server]++
	}
	for name, s := range set {
		if perServer[name] != len(s.Resources) {
			t.Errorf("list_resources lists %d resources of %s, it has %d", perServer[name], name, len(s.Resources))
		}
	}
	// An unknown server is an error naming it, not an empty list.
	if res, raw := callResourceTool(t, h, "mcp__trunk__list_resources", `{"server":"nosuch"}`); !res.IsError || !strings.Contains(res.text(), `"nosuch"`) {
		t.Errorf("list_resources for an unknown server: %s, want isError naming it", raw)
	}

	// read_resource: text inline, by namespaced URI or by server + URI.
	for _, args := range []string{`{"uri":"mcptrunk://notes/notes://readme"}`, `{"server":"notes","uri":"notes://readme"}`} {
		if res, raw := callResourceTool(t, h, "mcp__trunk__read_resource", args); res.IsError || res.text() != "Notes: read me first." {
			t.Errorf("read_resource %s: %s, want the readme's text", args, raw)
		}
	}

	// A blob is saved to a file in the temporary directory, readable by
	// the user alone, holding the decoded bytes.
	res, raw := callResourceTool(t, h, "mcp__trunk__read_resource", `{"uri":"mcptrunk://everything/demo://resource/dynamic/blob/7"}`)
	m := regexp.MustCompile(`saved to (\S+)$`).FindStringSubmatch(res.text())
	if res.IsError || m == nil {
		t.Fatalf("read_resource of a blob: %s, want the path of a saved file", raw)
	}
	saved := m[1]
	if filepath.Dir(saved) != tmp {
		t.Errorf("the blob was saved to %s, not in the temporary directory %s", saved, tmp)
	}
	data, err := os.ReadFile(saved)
	if err != nil {
		t.Fatalf("the saved blob: %v", err)
	}
	if string(data) != resourceBlob {
		t.Errorf("the saved blob holds %q, want %q", data, resourceBlob)
	}
	if info, err := os.Stat(saved); err != nil || info.Mode().Perm()&0o077 != 0 {
		t.Errorf("the saved blob %s: %v, mode %v: readable by others", saved, err, info.Mode().Perm())
	}
	if err := os.Remove(saved); err != nil {
		t.Errorf("removing the saved blob: %v", err)
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
		res, raw := callResourceTool(t, h, "mcp__trunk__read_resource", `{"uri":`+mustQuote(u)+`}`)
		if !res.IsError || !strings.Contains(res.text(), "list_resources") || !strings.Contains(res.text(), u) {
			t.Errorf("read_resource %s: %s, want isError naming the URI and suggesting list_resources", u, raw)
		}
	}
}
