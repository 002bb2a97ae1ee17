package main

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

func TestSearchIgnoresCaseAndNeverReturnsNil(t *testing.T) {
	s := newStore()
	got := s.search("MEETING")
	if len(got) != 1 || got[0] != (noteRef{ID: "2", Title: "Meeting notes"}) {
		t.Fatalf("search(MEETING) = %v", got)
	}
	if got := s.search("no such words"); got == nil || len(got) != 0 {
		t.Fatalf("search miss = %#v, want empty non-nil slice", got)
	}
}

func TestAddAssignsFreshIDs(t *testing.T) {
	s := newStore()
	if id := s.add("a", "b"); id != "4" {
		t.Fatalf("first id = %q, want 4", id)
	}
	if n, ok := s.get("4"); !ok || n.text() != "a\n\nb" {
		t.Fatalf("get(4) = %v, %v", n, ok)
	}
}

func TestToolNames(t *testing.T) {
	legal := regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	if name := longToolName(); len(name) != 100 || !legal.MatchString(name) {
		t.Errorf("longToolName() = %q (len %d)", name, len(name))
	}
	if legal.MatchString(illegalToolName) {
		t.Errorf("%q should contain illegal characters", illegalToolName)
	}
	if got := extraToolName(7); got != "extra_007" {
		t.Errorf("extraToolName(7) = %q", got)
	}
}

func TestRichSchemasAreValidJSON(t *testing.T) {
	var in map[string]any
	if err := json.Unmarshal([]byte(richInputSchema), &in); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"$schema", "$id", "title", "anyOf", "examples", "additionalProperties", "definitions", "x-custom"} {
		if _, ok := in[key]; !ok {
			t.Errorf("rich input schema lacks %q", key)
		}
	}
	if !json.Valid([]byte(richOutputSchema)) {
		t.Error("rich output schema is not valid JSON")
	}
}

func TestBlobLength(t *testing.T) {
	req := mcp.CallToolRequest{Params: mcp.CallToolParams{Arguments: map[string]any{"bytes": float64(1234)}}}
	res, err := blob(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(mcp.TextContent).Text
	if len(text) != 1234 || strings.Trim(text, "x") != "" {
		t.Fatalf("blob returned %d bytes", len(text))
	}
}

func TestTemplateArg(t *testing.T) {
	if got := templateArg(map[string]any{"id": []string{"2"}}, "id"); got != "2" {
		t.Errorf("[]string: %q", got)
	}
	if got := templateArg(map[string]any{"id": "3"}, "id"); got != "3" {
		t.Errorf("string: %q", got)
	}
	if got := templateArg(nil, "id"); got != "" {
		t.Errorf("missing: %q", got)
	}
}
