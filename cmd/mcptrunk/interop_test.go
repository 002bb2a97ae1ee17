package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestInteropNPM runs the official reference servers behind the trunk with
// the official Go SDK as the host, and compares everything they offer with
// what the same SDK sees when connected to them directly.
func TestInteropNPM(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 120*time.Second)
	node, everything, filesystem := npmServers(t)

	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const hello = "hello from the mcptrunk e2e test\nsecond line\n"
	if err := os.WriteFile(filepath.Join(root, "hello.txt"), []byte(hello), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}

	argv := map[string][]string{
		"everything": {everything, "stdio"},
		"filesystem": {filesystem, root},
	}
	slow := map[string]any{"connect": "60s", "list": "60s", "call": "60s"}
	cfg := writeConfig(t, map[string]server{
		"everything": {"command": node, "args": argv["everything"], "timeouts": slow},
		"filesystem": {"command": node, "args": argv["filesystem"], "timeouts": slow},
		"notes":      notesServer(),
	}, map[string]any{"startupWait": "60s"})

	// Start the trunk first so its upstreams boot while the direct ones do.
	// The npm servers speak only 2025-11-25, so the direct sessions are at
	// that revision; the host is pinned to it too, so that results compare
	// byte for byte (at 2026-07-28 they would carry resultType and cache
	// hints the direct ones cannot).
	trunk := trunkHost(t, ctx, cfg, hostConfig{sdkDefaults: true}, rev2025)
	direct := map[string]*host{}
	for _, name := range []string{"everything", "filesystem"} {
		direct[name] = startHost(t, ctx, exec.Command(node, argv[name]...), hostConfig{sdkDefaults: true}, "")
	}

	// Catalogs: every item of each server appears under its namespace.
	// Upstreams may still announce items after their handshake (everything
	// registers tools once it knows the client's capabilities), so the
	// comparison is retried until it holds or the deadline passes.
	directCats := map[string]sdkCatalog{}
	for name, s := range direct {
		directCats[name] = listAll(t, ctx, s.ClientSession)
	}
	var through sdkCatalog
	waitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err = eventually(waitCtx, 250*time.Millisecond, func() error {
		through = listAll(t, ctx, trunk.ClientSession)
		var problems []string
		for name, want := range directCats {
			problems = append(problems, compareCatalogs(name, want, through)...)
		}
		if len(problems) > 0 {
			return fmt.Errorf("%s", strings.Join(problems, "\n"))
		}
		return nil
	})
	if err != nil {
		t.Errorf("the trunk's catalog does not match the servers':\n%v", err)
	}
	for _, name := range []string{"everything", "filesystem"} {
		c := directCats[name]
		t.Logf("%s: %d tools, %d prompts, %d resources, %d resource templates", name, len(c.tools), len(c.prompts), len(c.resources), len(c.templates))
		t.Logf("%s: tools %q, prompts %q, templates %q", name, c.toolNames(), c.promptNames(), c.templateURIs())
	}
	t.Logf("through the trunk: %d tools, %d prompts, %d resources, %d resource templates",
		len(through.tools), len(through.prompts), len(through.resources), len(through.templates))
	if n := len(directCats["everything"].tools); n == 0 || len(directCats["everything"].prompts) == 0 ||
		len(directCats["everything"].resources) == 0 || len(directCats["everything"].templates) == 0 {
		t.Errorf("server-everything offers too little directly (%d tools): the comparison proves nothing", n)
	}
	if len(directCats["filesystem"].tools) == 0 {
		t.Errorf("server-filesystem offers no tools directly")
	}
	for _, l := range [][]string{through.toolNames(), through.promptNames(), through.resourceURIs(), through.templateURIs()} {
		if !slices.IsSorted(l) {
			t.Errorf("a list through the trunk is not sorted: %q", l)
		}
	}

	// Tools route to their owner and answer as they do directly.
	sameCall := func(server, tool string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		got, err := trunk.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__" + server + "__" + tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s's %s through the trunk: %v", server, tool, err)
		}
		want, err := direct[server].CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s's %s directly: %v", server, tool, err)
		}
		if a, b := mustJSON(got), mustJSON(want); a != b {
			t.Errorf("%s's %s:\nthrough the trunk: %s\ndirectly:          %s", server, tool, a, b)
		}
		if got.IsError {
			t.Errorf("%s's %s: isError: %s", server, tool, mustJSON(got))
		}
		return got
	}
	res := sameCall("everything", "echo", map[string]any{"message": "through the trunk ✓"})
	if text := toolText(res); !strings.Contains(text, "through the trunk ✓") {
		t.Errorf("everything's echo: %q", text)
	}
	res = sameCall("filesystem", "list_directory", map[string]any{"path": root})
	if text := toolText(res); !strings.Contains(text, "hello.txt") || !strings.Contains(text, "sub") {
		t.Errorf("filesystem's list_directory %s: %q", root, text)
	}
	res = sameCall("filesystem", "read_text_file", map[string]any{"path": filepath.Join(root, "hello.txt")})
	if text := toolText(res); text != hello {
		t.Errorf("filesystem's read_text_file: %q, want %q", text, hello)
	}
	notesRes, err := trunk.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__notes__echo", Arguments: map[string]any{"text": "notes too"}})
	if err != nil || toolText(notesRes) != "notes too" {
		t.Errorf("mcp__notes__echo next to the npm servers: %v %v", err, notesRes)
	}

	// Prompts, without and with arguments.
	samePrompt := func(name string, args map[string]string) string {
		t.Helper()
		got, err := trunk.GetPrompt(ctx, &mcp.GetPromptParams{Name: "mcp__everything__" + name, Arguments: args})
		if err != nil {
			t.Fatalf("everything's %s through the trunk: %v", name, err)
		}
		want, err := direct["everything"].GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("everything's %s directly: %v", name, err)
		}
		if a, b := mustJSON(got), mustJSON(want); a != b {
			t.Errorf("everything's %s:\nthrough the trunk: %s\ndirectly:          %s", name, a, b)
		}
		return promptText(got)
	}
	if text := samePrompt("simple-prompt", nil); !strings.Contains(text, "simple prompt") {
		t.Errorf("simple-prompt: %q", text)
	}
	if text := samePrompt("args-prompt", map[string]string{"city": "Trondheim", "state": "Trøndelag"}); !strings.Contains(text, "Trondheim, Trøndelag") {
		t.Errorf("args-prompt: %q, want both arguments", text)
	}

	// A static resource and a template-expanded one.
	var static string
	for _, r := range directCats["everything"].resources {
		if strings.HasPrefix(r.URI, "demo://resource/static/document/") {
			static = r.URI
			break
		}
	}
	if static == "" {
		t.Fatalf("server-everything lists no demo://resource/static/document/ resource")
	}
	got := readOne(t, ctx, trunk.ClientSession, "mcptrunk://everything/"+static)
	want := readOne(t, ctx, direct["everything"].ClientSession, static)
	if got.Text == "" || got.Text != want.Text || got.MIMEType != want.MIMEType {
		t.Errorf("%s: through the trunk %q (%s), directly %q (%s)", static, tail(got.Text, 80), got.MIMEType, tail(want.Text, 80), want.MIMEType)
	}

	const textTemplate = "mcptrunk://everything/demo://resource/dynamic/text/{resourceId}"
	if !slices.Contains(through.templateURIs(), textTemplate) {
		t.Fatalf("template %s is not listed: %q", textTemplate, through.templateURIs())
	}
	got = readOne(t, ctx, trunk.ClientSession, strings.Replace(textTemplate, "{resourceId}", "7", 1))
	if !strings.HasPrefix(got.Text, "Resource 7: ") {
		t.Errorf("the dynamic text resource 7: %q", got.Text)
	}
	const blobTemplate = "mcptrunk://everything/demo://resource/dynamic/blob/{resourceId}"
	if slices.Contains(through.templateURIs(), blobTemplate) {
		got = readOne(t, ctx, trunk.ClientSession, strings.Replace(blobTemplate, "{resourceId}", "2", 1))
		if got.Blob == nil {
			t.Errorf("the dynamic blob resource 2 has no blob: %s", mustJSON(got))
		}
	}
}

// compareCatalogs lists how the trunk's catalog differs from what server
// offers directly: every item must appear under its exported name and be
// otherwise identical, and the trunk must list nothing else for server.
func compareCatalogs(server string, direct, through sdkCatalog) []string {
	var problems []string
	check := func(kind string, directItems, throughItems []any, key func(any) string, rename func(any, string) any, export func(string) string) {
		byKey := map[string]any{}
		for _, it := range throughItems {
			byKey[key(it)] = it
		}
		seen := 0
		for _, it := range directItems {
			name := export(key(it))
			got, ok := byKey[name]
			if !ok {
				problems = append(problems, fmt.Sprintf("%s's %s %q is not listed as %q", server, kind, key(it), name))
				continue
			}
			seen++
			if a, b := mustJSON(rename(it, name)), mustJSON(got); a != b {
				problems = append(problems, fmt.Sprintf("%s's %s %q differs:\n  directly:          %s\n  through the trunk: %s", server, kind, key(it), a, b))
			}
		}
		prefix := export("")
		n := 0
		for k := range byKey {
			if strings.HasPrefix(k, prefix) {
				n++
			}
		}
		if n != len(directItems) {
			problems = append(problems, fmt.Sprintf("%s: %d %ss through the trunk, %d directly", server, n, kind, len(directItems)))
		}
	}
	named := func(raw string) string { return "mcp__" + server + "__" + raw }
	uri := func(raw string) string { return "mcptrunk://" + server + "/" + raw }
	check("tool", anySlice(direct.tools), anySlice(through.tools),
		func(x any) string { return x.(*mcp.Tool).Name },
		func(x any, n string) any { c := *x.(*mcp.Tool); c.Name = n; return &c }, named)
	check("prompt", anySlice(direct.prompts), anySlice(through.prompts),
		func(x any) string { return x.(*mcp.Prompt).Name },
		func(x any, n string) any { c := *x.(*mcp.Prompt); c.Name = n; return &c }, named)
	check("resource", anySlice(direct.resources), anySlice(through.resources),
		func(x any) string { return x.(*mcp.Resource).URI },
		func(x any, n string) any { c := *x.(*mcp.Resource); c.URI = n; return &c }, uri)
	check("resource template", anySlice(direct.templates), anySlice(through.templates),
		func(x any) string { return x.(*mcp.ResourceTemplate).URITemplate },
		func(x any, n string) any { c := *x.(*mcp.ResourceTemplate); c.URITemplate = n; return &c }, uri)
	return problems
}

func anySlice[T any](s []T) []any {
	out := make([]any, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}

// readOne reads a resource that has exactly one content, whose URI must be
// the one asked for.
func readOne(t *testing.T, ctx context.Context, s *mcp.ClientSession, uri string) *mcp.ResourceContents {
	t.Helper()
	res, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("resources/read %s: %v", uri, err)
	}
	if len(res.Contents) != 1 {
		t.Fatalf("resources/read %s: %d contents, want 1", uri, len(res.Contents))
	}
	if res.Contents[0].URI != uri {
		t.Errorf("resources/read %s: contents uri %q", uri, res.Contents[0].URI)
	}
	return res.Contents[0]
}
