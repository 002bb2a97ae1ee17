package catalog

import (
	"encoding/json"
	"fmt"

	"github.com/mcptrunk/mcptrunk/internal/rawjson"
)

// CompletionTarget resolves the ref of a completion/complete request (a
// prompt's exported name or a template's exported URI) to the server that
// owns it, the member of the ref that names it ("name" or "uri"), and the
// server's own name for it. The error says what is unknown.
func (c *Catalog) CompletionTarget(ref json.RawMessage) (server, field, value string, err error) {
	kind, _ := rawjson.StringField(ref, "type")
	switch kind {
	case "ref/prompt":
		name, _ := rawjson.StringField(ref, "name")
		server, ok := c.NameOwner(ListPrompts, name)
		if ok {
			value, ok = c.Prompts[server][name]
		}
		if !ok {
			return "", "", "", fmt.Errorf("unknown prompt %q", name)
		}
		return server, "name", value, nil
	case "ref/resource":
		uri, _ := rawjson.StringField(ref, "uri")
		server, value, err := c.refOwner(uri)
		if err != nil {
			return "", "", "", fmt.Errorf("unknown resource %q", uri)
		}
		return server, "uri", value, nil
	}
	return "", "", "", fmt.Errorf("unknown ref type %q", kind)
}
