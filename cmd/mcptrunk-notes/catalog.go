package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

const readme = `mcptrunk-notes is an example MCP server for mcptrunk.
It keeps a small notebook in memory; nothing is saved and nothing leaves the process.
Tools: search, add_note, get_note, echo, blob, rich.
`

// addPrompts registers summarize (one required and one optional argument) and
// daily_review (no arguments).
func addPrompts(s *server.MCPServer, notes *store) {
	s.AddPrompt(mcp.NewPrompt("summarize",
		mcp.WithPromptDescription("Ask for a summary of the notes about a topic."),
		mcp.WithArgument("topic", mcp.RequiredArgument(), mcp.ArgumentDescription("What to summarise.")),
		mcp.WithArgument("style", mcp.ArgumentDescription("Tone of the summary; defaults to concise.")),
	), func(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		topic := req.Params.Arguments["topic"]
		if topic == "" {
			return nil, fmt.Errorf("argument %q is required", "topic")
		}
		style := req.Params.Arguments["style"]
		if style == "" {
			style = "concise"
		}
		return mcp.NewGetPromptResult("Summarise notes about "+topic, []mcp.PromptMessage{
			mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(
				fmt.Sprintf("Summarise my notes about %q in a %s style.", topic, style))),
		}), nil
	})

	s.AddPrompt(mcp.NewPrompt("daily_review",
		mcp.WithPromptDescription("Review every note once a day."),
	), func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return mcp.NewGetPromptResult("Daily review", []mcp.PromptMessage{
			mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(
				"Go through these notes and say which need follow-up:\n"+noteList(notes.all()))),
		}), nil
	})
}

// addResources registers notes://all, notes://readme and the
// notes://note/{id} template.
func addResources(s *server.MCPServer, notes *store) {
	s.AddResource(mcp.NewResource("notes://all", "all_notes",
		mcp.WithResourceDescription("Every note, as a Markdown list."),
		mcp.WithMIMEType("text/markdown"),
	), func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{mcp.TextResourceContents{
			URI: req.Params.URI, MIMEType: "text/markdown", Text: "# Notes\n\n" + noteList(notes.all()),
		}}, nil
	})

	s.AddResource(mcp.NewResource("notes://readme", "readme",
		mcp.WithResourceDescription("What this server is."),
		mcp.WithMIMEType("text/plain"),
	), func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{mcp.TextResourceContents{
			URI: req.Params.URI, MIMEType: "text/plain", Text: readme,
		}}, nil
	})

	s.AddResourceTemplate(mcp.NewResourceTemplate("notes://note/{id}", "note",
		mcp.WithTemplateDescription("One note by id."),
		mcp.WithTemplateMIMEType("text/plain"),
	), func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		id := templateArg(req.Params.Arguments, "id")
		n, ok := notes.get(id)
		if !ok {
			return nil, fmt.Errorf("note %q not found", id)
		}
		return []mcp.ResourceContents{mcp.TextResourceContents{
			URI: req.Params.URI, MIMEType: "text/plain", Text: n.text(),
		}}, nil
	})
}

// noteList renders notes as Markdown list items, one per line.
func noteList(notes []note) string {
	var b strings.Builder
	for _, n := range notes {
		fmt.Fprintf(&b, "- [%s] %s\n", n.ID, n.Title)
	}
	return b.String()
}

// templateArg reads a variable matched from a URI template. mcp-go stores
// matches as []string (one element for a simple {var}); a plain string is
// accepted too in case that changes.
func templateArg(args map[string]any, name string) string {
	switch v := args[name].(type) {
	case string:
		return v
	case []string:
		if len(v) > 0 {
			return v[0]
		}
	}
	return ""
}
