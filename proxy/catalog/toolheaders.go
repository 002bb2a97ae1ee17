package catalog

import (
	"bytes"
	"encoding/json"
	"sort"
)

// ToolHeaderParams returns, for an exported tool, the arguments its input
// schema mirrors in HTTP headers at the stateless revision ("x-mcp-header":
// the header is Mcp-Param-<value>): argument name -> header suffix. nil for
// a tool that has none or is unknown. The HTTP downstream checks each
// header against the body, as the revision requires of a server.
func (c *Catalog) ToolHeaderParams(name string) map[string]string {
	tools := c.Lists[ListTools]
	i := sort.Search(len(tools), func(i int) bool { return tools[i].Exported >= name })
	if i == len(tools) || tools[i].Exported != name || !bytes.Contains(tools[i].Item, []byte(`"x-mcp-header"`)) {
		return nil // the common case: nothing mirrored, nothing decoded
	}
	var tool struct {
		InputSchema struct {
			Properties map[string]struct {
				Header *string `json:"x-mcp-header"`
			} `json:"properties"`
		} `json:"inputSchema"`
	}
	if json.Unmarshal(tools[i].Item, &tool) != nil {
		return nil
	}
	var out map[string]string
	for arg, p := range tool.InputSchema.Properties {
		if p.Header == nil || *p.Header == "" {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[arg] = *p.Header
	}
	return out
}
