package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestToolOverrides: with the notes server's echo renamed say, described
// anew and its text fixed, an independent client (go-sdk) lists
// mcp__notes__say with that description and no text in its schema, gets
// fixed-text back for {}, and is refused when it passes text; the lockfile
// holds echo as the server gives it, so pin --check finds no drift, and
// the trunk under enforce serves the override of what was pinned; check
// and list say what is overridden (a profile's own too), and that "ecko"
// names no tool.
func TestToolOverrides(t *testing.T) {
	t.Parallel()
	notes := withFields(notesServer(), map[string]any{"overrides": map[string]any{"tools": map[string]any{"echo": map[string]any{
		"name": "say", "description": "Say it back", "arguments": map[string]any{"text": map[string]any{"fixed": "fixed-text"}},
	}, "ecko": map[string]any{"description": "a typo"}}}})
	support := map[string]any{"overrides": map[string]any{"notes": map[string]any{"tools": map[string]any{"echo": map[string]any{"title": "Say"}}}}}
	cfg := writeConfig(t, map[string]server{"notes": notes}, map[string]any{"pin": "enforce", "profiles": map[string]any{"support": support}})
	runPin(t, 0, []string{"Recorded"}, "--config", cfg, "--yes")
	lock, _ := readLockfile(t, lockfilePath(cfg))
	var echo struct{ Name, Description string }
	if err := json.Unmarshal(lock.Servers["notes"]["tools"]["echo"].Definition, &echo); err != nil || echo.Name != "echo" || echo.Description != "Return the text argument unchanged." {
		t.Errorf("the lockfile's echo is not the server's: %+v, %v", echo, err)
	}
	runPin(t, 0, []string{"Everything matches the lockfile"}, "--config", cfg, "--check")
	for _, cmd := range []string{"check", "list"} {
		stdout, stderr, code := runCLI(t, pinRunTimeout, cmd, "--config", cfg)
		for _, want := range []string{
			`overrides: server "notes": tool "echo" is listed as "mcp__notes__say": name say, description, text fixed`,
			`overrides: warning: server "notes": overrides.tools names "ecko", which the server does not have (did you mean "echo"?)`,
			`overrides: profile "support": server "notes": tool "echo" is listed as "mcp__notes__say": name say, title, description, text fixed`,
		} {
			if code != 0 || !strings.Contains(stdout, want) {
				t.Errorf("mcptrunk %s: exit %d, stdout lacks %q:\n%s\nstderr:\n%s", cmd, code, want, stdout, stderr)
			}
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	h := connectTrunk(t, ctx, cfg)
	var say *mcp.Tool
	for tool, err := range h.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		switch tool.Name {
		case "mcp__notes__say":
			say = tool
		case "mcp__notes__echo":
			t.Error("mcp__notes__echo is listed beside its new name")
		}
	}
	if say == nil {
		t.Fatal("mcp__notes__say is not listed")
	}
	schema, _ := json.Marshal(say.InputSchema)
	if say.Description != "Say it back" || strings.Contains(string(schema), "text") {
		t.Errorf("mcp__notes__say: description %q, schema %s", say.Description, schema)
	}
	if got := callText(t, ctx, h.ClientSession, "mcp__notes__say", nil); got != "fixed-text" {
		t.Errorf("mcp__notes__say {}: %q, want fixed-text", got)
	}
	res, err := h.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__notes__say", Arguments: map[string]any{"text": "mine"}})
	if err == nil || !strings.Contains(err.Error(), `tool "mcp__notes__say": argument "text" is fixed`) {
		t.Errorf("mcp__notes__say with text: %v, %v; want a refusal naming the tool and argument", mustJSON(res), err)
	}
}

// TestResultsFitOverHTTP: with maxResultBytes 16384 on the notes server's
// blob, check says so, and a go-sdk host of `serve --http` calling for 200,000 bytes gets at
// most 16,384 of them and a resource_link; reading the link gives back
// the 200,000 bytes, and its pages at most 16,384 each, adding up to
// them; another session of the same trunk reading the link is refused as
// for a resource that does not exist.
func TestResultsFitOverHTTP(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 2*time.Minute)
	notes := withFields(notesServer(), map[string]any{"overrides": map[string]any{"tools": map[string]any{"blob": map[string]any{"maxResultBytes": 16384}}}})
	cfg := writeConfig(t, map[string]server{"notes": notes}, nil)
	want := `overrides: server "notes": tool "blob" is listed as "mcp__notes__blob": maxResultBytes 16384`
	if stdout, stderr, code := runCLI(t, pinRunTimeout, "check", "--config", cfg); code != 0 || !strings.Contains(stdout, want) {
		t.Errorf("mcptrunk check: exit %d, stdout lacks %q:\n%s\nstderr:\n%s", code, want, stdout, stderr)
	}
	trunk := startHTTPTrunk(t, ctx, cfg)
	connect := func() *mcp.ClientSession {
		return httpHost(t, ctx, trunk.url, hostConfig{sdkDefaults: true}, "2025-11-25").ClientSession
	}
	mine, other := connect(), connect()

	res, err := mine.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__notes__blob", Arguments: map[string]any{"bytes": 200_000}})
	if err != nil {
		t.Fatal(err)
	}
	var shown int
	var link *mcp.ResourceLink
	for i, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			if i == 0 {
				shown = len(c.Text)
			}
		case *mcp.ResourceLink:
			link = c
		}
	}
	if shown == 0 || shown > 16384 || link == nil {
		t.Fatalf("the result: %d bytes of blob shown, link %v: %.600s", shown, link, mustJSON(res))
	}
	read := func(cs *mcp.ClientSession, uri string) (string, error) {
		r, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			return "", err
		}
		if len(r.Contents) == 0 {
			return "", nil
		}
		return r.Contents[0].Text, nil
	}
	if whole, err := read(mine, link.URI); whole != strings.Repeat("x", 200_000) {
		t.Errorf("reading the link: %d bytes, %v", len(whole), err)
	}
	total := 0
	for page := 1; total < 200_000; page++ {
		got, err := read(mine, fmt.Sprintf("%s?page=%d", link.URI, page))
		if err != nil || got == "" || len(got) > 16384 || strings.Trim(got, "x") != "" {
			t.Fatalf("page %d: %d bytes, %v", page, len(got), err)
		}
		total += len(got)
	}
	if total != 200_000 {
		t.Errorf("the pages add up to %d bytes", total)
	}
	_, never := read(mine, "mcptrunk://trunk/results/00000000000000000000000000000000")
	for _, uri := range []string{link.URI, link.URI + "?page=1"} {
		got, err := read(other, uri)
		if err == nil || never == nil || strings.ReplaceAll(err.Error(), uri, "U") != strings.ReplaceAll(never.Error(), "mcptrunk://trunk/results/00000000000000000000000000000000", "U") {
			t.Errorf("another session reading %s: %d bytes, %v; want the answer to a link never given: %v", uri, len(got), err, never)
		}
	}
}
