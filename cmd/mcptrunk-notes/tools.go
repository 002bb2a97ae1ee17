package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// maxBlobBytes bounds blob so that a typo in a benchmark cannot exhaust memory;
// it leaves room for the 20 MB case.
const maxBlobBytes = 64 << 20

// illegalToolName holds characters outside [A-Za-z0-9_-] on purpose, to show
// how the proxy treats names it cannot re-export verbatim.
const illegalToolName = "get.note v2"

// longToolName returns a 100-character tool name made of legal characters
// only. The digits make any truncation visible at a glance.
func longToolName() string {
	return ("long_" + strings.Repeat("0123456789", 10))[:100]
}

// extraToolName names the i-th benchmark filler tool.
func extraToolName(i int) string {
	return fmt.Sprintf("extra_%03d", i)
}

// addTools registers the notes tools, plus the optional benchmark fillers and
// odd names selected by flags.
func addTools(s *server.MCPServer, notes *store, extra int, longNames bool) {
	searchTool := mcp.NewTool("search",
		mcp.WithDescription("Search notes by a case-insensitive substring of title or body."),
		mcp.WithString("query", mcp.Required(), mcp.Description("Text to look for.")),
		readOnly(),
	)
	searchTool.OutputSchema = mcp.ToolOutputSchema{
		Type: "object",
		Properties: map[string]any{
			"matches": map[string]any{
				"type": "array",
				"items": map[string]any{
					"type": "object",
					"properties": map[string]any{
						"id":    map[string]any{"type": "string"},
						"title": map[string]any{"type": "string"},
					},
					"required": []string{"id", "title"},
				},
			},
		},
		Required: []string{"matches"},
	}

	getNote := mcp.NewTool("get_note",
		mcp.WithDescription("Return the title and body of one note."),
		mcp.WithString("id", mcp.Required(), mcp.Description("Note id, e.g. \"1\".")),
		readOnly(),
	)
	getHandler := func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		id := req.GetString("id", "")
		n, ok := notes.get(id)
		if !ok {
			return mcp.NewToolResultErrorf("note %q not found", id), nil
		}
		return mcp.NewToolResultText(n.text()), nil
	}

	tools := []server.ServerTool{
		{Tool: searchTool, Handler: func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			query, err := req.RequireString("query")
			if err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			matches := notes.search(query)
			var text strings.Builder
			if len(matches) == 0 {
				fmt.Fprintf(&text, "no notes match %q", query)
			}
			for _, m := range matches {
				fmt.Fprintf(&text, "%s: %s\n", m.ID, m.Title)
			}
			return mcp.NewToolResultStructured(map[string]any{"matches": matches}, text.String()), nil
		}},
		{Tool: mcp.NewTool("add_note",
			mcp.WithDescription("Add a note and return its new id."),
			mcp.WithString("title", mcp.Required()),
			mcp.WithString("body", mcp.Required()),
			mcp.WithDestructiveHintAnnotation(false),
			mcp.WithIdempotentHintAnnotation(false),
			mcp.WithOpenWorldHintAnnotation(false),
		), Handler: func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			title, err := req.RequireString("title")
			if err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			return mcp.NewToolResultText(notes.add(title, req.GetString("body", ""))), nil
		}},
		{Tool: getNote, Handler: getHandler},
		{Tool: mcp.NewTool("echo",
			mcp.WithDescription("Return the text argument unchanged."),
			mcp.WithString("text", mcp.Required()),
			readOnly(),
		), Handler: echo},
		{Tool: mcp.NewTool("blob",
			mcp.WithDescription("Return one text content of exactly `bytes` 'x' characters."),
			mcp.WithInteger("bytes", mcp.Required(), mcp.Min(0), mcp.Max(maxBlobBytes)),
			readOnly(),
		), Handler: blob},
		{Tool: richTool(), Handler: richHandler(notes)},
	}

	if longNames {
		for _, name := range []string{longToolName(), illegalToolName} {
			alias := getNote
			alias.Name = name
			alias.Description = "Same as get_note, under a name that is awkward to re-export."
			tools = append(tools, server.ServerTool{Tool: alias, Handler: getHandler})
		}
	}

	for i := range extra {
		name := extraToolName(i)
		tools = append(tools, server.ServerTool{
			Tool: mcp.NewTool(name,
				mcp.WithDescription("Filler tool for large-catalogue benchmarks; returns its own name."),
				readOnly(),
			),
			Handler: func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText(name), nil
			},
		})
	}

	// One batch: AddTools announces list changes per call.
	s.AddTools(tools...)
}

// readOnly marks a tool that only reads the in-memory notebook. It replaces
// all four hints because mcp.NewTool defaults to destructive and open-world,
// which would contradict readOnlyHint.
func readOnly() mcp.ToolOption {
	return mcp.WithToolAnnotation(mcp.ToolAnnotation{
		ReadOnlyHint:    mcp.ToBoolPtr(true),
		DestructiveHint: mcp.ToBoolPtr(false),
		IdempotentHint:  mcp.ToBoolPtr(true),
		OpenWorldHint:   mcp.ToBoolPtr(false),
	})
}

// echo is the small-payload benchmark tool, so it does no more than read one
// argument and wrap it.
func echo(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	text, ok := req.GetArguments()["text"].(string)
	if !ok {
		return mcp.NewToolResultError(`argument "text" must be a string`), nil
	}
	return mcp.NewToolResultText(text), nil
}

// blob is the large-payload benchmark tool.
func blob(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	n, err := req.RequireInt("bytes")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	if n < 0 || n > maxBlobBytes {
		return mcp.NewToolResultErrorf("bytes must be between 0 and %d, got %d", maxBlobBytes, n), nil
	}
	return mcp.NewToolResultText(strings.Repeat("x", n)), nil
}
