package main

import (
	"context"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"
)

// richInputSchema is served verbatim (mcp-go passes RawInputSchema through
// untouched), so it carries every JSON Schema feature a lossy proxy might drop
// or rewrite: $schema, $id, title, anyOf, examples, additionalProperties,
// draft-07 definitions with a $ref into them, and a vendor x- key. Its anyOf
// accepts {} so that plain calls stay valid.
const richInputSchema = `{
  "$schema": "http://json-schema.org/draft-07/schema#",
  "$id": "https://example.com/schemas/notes/rich-input.json",
  "title": "Rich input",
  "type": "object",
  "properties": {
    "mode": {"$ref": "#/definitions/mode"},
    "count": {"type": "integer", "minimum": 1, "maximum": 10}
  },
  "anyOf": [
    {"required": ["mode"]},
    {"properties": {"count": {"maximum": 5}}}
  ],
  "examples": [{"mode": "full", "count": 7}, {"count": 2}],
  "additionalProperties": false,
  "definitions": {
    "mode": {"type": "string", "enum": ["brief", "full"], "default": "brief"}
  },
  "x-custom": {"owner": "notes", "stable": true}
}`

// richOutputSchema describes the structuredContent that rich returns.
const richOutputSchema = `{
  "type": "object",
  "properties": {
    "kinds": {"type": "array", "items": {"type": "string"}},
    "level": {"type": "integer"}
  },
  "required": ["kinds", "level"],
  "additionalProperties": false
}`

// tinyPNG is a valid 1x1 PNG; tinyWAV is a valid 8-sample, 8 kHz mono WAV.
const (
	tinyPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
	tinyWAV = "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA=="
)

// richTool is the listing-fidelity fixture: each optional field of a tool
// definition that mcp-go can emit is set, so tests can check that the proxy
// re-exports all of them unchanged.
func richTool() mcp.Tool {
	return mcp.Tool{
		Name:            "rich",
		Title:           "Rich fidelity fixture",
		Description:     "Returns every content type; its definition exercises every optional tool field.",
		RawInputSchema:  json.RawMessage(richInputSchema),
		RawOutputSchema: json.RawMessage(richOutputSchema),
		Annotations: mcp.ToolAnnotation{
			Title:         "Rich (annotation title)",
			ReadOnlyHint:  mcp.ToBoolPtr(true),
			OpenWorldHint: mcp.ToBoolPtr(false),
		},
		Icons: []mcp.Icon{{Src: "data:image/png;base64,iVBORw0KGgo=", MIMEType: "image/png"}},
		Meta: &mcp.Meta{AdditionalFields: map[string]any{
			"com.example/rich": map[string]any{"level": 3},
		}},
	}
}

// richHandler returns one content item of each type, structuredContent
// matching richOutputSchema, and result-level _meta.
func richHandler(notes *store) func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		first, _ := notes.get("1")
		return &mcp.CallToolResult{
			Result: mcp.Result{Meta: &mcp.Meta{AdditionalFields: map[string]any{
				"com.example/rich": map[string]any{"served": true},
			}}},
			Content: []mcp.Content{
				mcp.NewTextContent("rich result"),
				mcp.NewImageContent(tinyPNG, "image/png"),
				mcp.NewAudioContent(tinyWAV, "audio/wav"),
				mcp.NewEmbeddedResource(mcp.TextResourceContents{
					URI:      "notes://note/1",
					MIMEType: "text/plain",
					Text:     first.text(),
				}),
				mcp.NewResourceLink("notes://note/2", "note-2", "The second seeded note.", "text/plain"),
			},
			StructuredContent: map[string]any{
				"kinds": []string{"text", "image", "audio", "resource", "resource_link"},
				"level": 3,
			},
		}, nil
	}
}
