package catalog

import (
	"bytes"
	"encoding/json"

	"github.com/mcptrunk/mcptrunk/internal/rawjson"
)

// MCP Apps (the io.modelcontextprotocol/ui extension) name their HTML in a
// tool's _meta: "ui": {"resourceUri": ...}, or the older flat
// "ui/resourceUri" key. The host reads that URI back through the trunk, so
// it is namespaced as every other URI the server sends is
// (naming.ResourceURI keeps ui:// URIs ui://). The rest of _meta.ui (csp,
// permissions, visibility, prefersBorder, domain) is the server's word to
// the host and passes byte for byte.

// resourceURIKey is the cheap test that spares objects without an app URI
// any decoding.
var resourceURIKey = []byte(`resourceUri"`)

// namespaceAppMeta rewrites the app resource URIs in obj's top-level _meta:
// a tool definition, or a tools/call result. Anything unexpected leaves
// obj as it was.
func namespaceAppMeta(server string, obj json.RawMessage) json.RawMessage {
	if !bytes.Contains(obj, resourceURIKey) && !bytes.Contains(obj, []byte(`\u`)) {
		return obj
	}
	start, end, found, err := rawjson.FieldSpan(obj, "_meta")
	if err != nil || !found {
		return obj
	}
	meta := rewriteObjectField(obj[start:end], "ui", func(ui json.RawMessage) json.RawMessage {
		return namespaceStringField(server, ui, "resourceUri")
	})
	meta = namespaceStringField(server, meta, "ui/resourceUri")
	if bytes.Equal(meta, obj[start:end]) {
		return obj
	}
	out, err := rawjson.ReplaceField(obj, "_meta", meta)
	if err != nil {
		return obj
	}
	return out
}

// rewriteObjectField applies f to obj's top-level field when it is an
// object, and returns obj unchanged otherwise.
func rewriteObjectField(obj json.RawMessage, field string, f func(json.RawMessage) json.RawMessage) json.RawMessage {
	start, end, found, err := rawjson.FieldSpan(obj, field)
	if err != nil || !found || obj[start] != '{' {
		return obj
	}
	inner := f(obj[start:end])
	if bytes.Equal(inner, obj[start:end]) {
		return obj
	}
	out, err := rawjson.ReplaceField(obj, field, inner)
	if err != nil {
		return obj
	}
	return out
}

// namespaceAppMetas rewrites the app URIs of each exported tool.
func namespaceAppMetas(server string, entries []Entry) {
	for i := range entries {
		entries[i].Item = namespaceAppMeta(server, entries[i].Item)
	}
}
