package catalog

import (
	"fmt"
	"strings"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
)

// An MCP App calls its server's tools by the names the server gave them:
// the app was written against the server, not the trunk, and the host
// passes its call on as an ordinary tools/call. Nothing in such a request
// says which app sent it, so the trunk routes a name it does not export by
// who exports a tool of that name: when exactly one namespaced server does,
// the call goes there. Exported names always win, so no model-visible
// name changes meaning, and a name two servers share is refused with the
// candidates rather than guessed.

// addBare records the upstream names of a namespaced server's exported
// tools, for AppTool.
func (c *Catalog) addBare(tools []Entry) {
	if c.bare == nil {
		c.bare = map[string][]Entry{}
	}
	for _, e := range tools {
		c.bare[e.Raw] = append(c.bare[e.Raw], e)
	}
}

// AppTool returns the exported name a tools/call's name stands for: the
// name itself when the trunk exports it (or no server has a tool of that
// name, so that the usual "unknown tool" answers), else the exported name
// of the one tool a namespaced server has under that name. Several such
// servers are an error naming them all.
func (c *Catalog) AppTool(name string) (string, error) {
	if server, ok := c.NameOwner(ListTools, name); ok {
		if _, exported := c.Tools[server][name]; exported {
			return name, nil
		}
	}
	cands := c.bare[name]
	switch len(cands) {
	case 0:
		return name, nil
	case 1:
		return cands[0].Exported, nil
	}
	list := make([]string, len(cands))
	for i, e := range cands {
		list[i] = fmt.Sprintf("%q (server %q)", e.Exported, e.Server)
	}
	return "", jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "tool %q is ambiguous: %d servers have a tool of that name, exported as %s; call it by one of those names",
		name, len(cands), strings.Join(list, ", "))
}
