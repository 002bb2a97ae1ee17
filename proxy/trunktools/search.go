package trunktools

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/mcptrunk/mcptrunk/proxy/catalog"
)

// Tool search (trunk.toolSearch): instead of every tool, the host gets a
// search tool that returns the full definitions of the best matches, and a
// tool that calls any tool by name. A catalog of hundreds of tools then
// costs the host's context two definitions, not hundreds.
var (
	searchTool = ownTool{"search_tools", `"title":"Search MCP tools",` +
		`"description":"Search the tools of every MCP server behind mcptrunk by keywords (matched against names, titles, descriptions and parameter names). Returns the full definitions of the best matches; call one with call_tool.",` +
		`"inputSchema":{"type":"object","properties":{"query":{"type":"string","description":"Keywords describing what the tool should do."},` +
		`"limit":{"type":"integer","minimum":1,"maximum":50,"description":"How many tools to return (default 5)."}},"required":["query"]},` + readOnlyAnnotations}
	callTool = ownTool{"call_tool", `"title":"Call an MCP tool",` +
		`"description":"Call a tool found with search_tools, by its full name, with its arguments.",` +
		`"inputSchema":{"type":"object","properties":{"name":{"type":"string","description":"The tool's full name as search_tools returned it."},` +
		`"arguments":{"type":"object","description":"The tool's arguments, as its inputSchema describes."}},"required":["name"]}`}
)

func (t runner) runSearchTools(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	var a struct {
		Query string `json:"query"`
		Limit int    `json:"limit"`
	}
	if err := json.Unmarshal(args, &a); err != nil || strings.TrimSpace(a.Query) == "" {
		return catalog.ToolError("search_tools: a query is required")
	}
	if a.Limit <= 0 {
		a.Limit = 5
	}
	t.WaitSettled(ctx)
	hits := catalog.Search(t.Catalog(ctx).Searchable, a.Query, min(a.Limit, 50))
	tools := make([]json.RawMessage, len(hits))
	for i, h := range hits {
		tools[i] = h.Item
	}
	// Text only: the answer is for the model to read, and structured content
	// would carry every definition a second time.
	return toolText(map[string]any{"tools": tools})
}

func (t runner) runCallTool(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	var a struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments,omitempty"`
	}
	if err := json.Unmarshal(args, &a); err != nil || a.Name == "" {
		return catalog.ToolError("call_tool: a tool name is required")
	}
	if string(a.Arguments) == "null" {
		// Absent arguments stay absent: servers that validate params
		// (the TypeScript SDK's) reject "arguments": null.
		a.Arguments = nil
	}
	params, err := json.Marshal(a)
	if err != nil {
		return nil, err
	}
	return t.CallTool(ctx, params)
}
