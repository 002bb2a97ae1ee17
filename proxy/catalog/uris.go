package catalog

import (
	"bytes"
	"encoding/json"

	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/naming"
)

// The URIs a result carries name resources on the server that sent it. The
// host can only read them back through the trunk, so they are rewritten to
// the namespaced form: resource links and embedded resources in tool
// results and prompt messages, and the contents of resources/read.

// uriKey is the cheap test that spares results without URIs any decoding.
var uriKey = []byte(`"uri"`)

// mayHaveURI reports whether res can hold a "uri" key: written plainly, or
// with \u escapes (`"\u0075ri"` is the same key to a JSON reader).
func mayHaveURI(res json.RawMessage) bool {
	return bytes.Contains(res, uriKey) || bytes.Contains(res, []byte(`\u`))
}

// NamespaceToolResult rewrites the URIs in a tools/call result's content
// and the app URI of its _meta.
func NamespaceToolResult(server string, res json.RawMessage) json.RawMessage {
	res = namespaceAppMeta(server, res)
	if !mayHaveURI(res) {
		return res
	}
	return rewriteArrayField(res, "content", func(item json.RawMessage) json.RawMessage {
		return namespaceContent(server, item)
	})
}

// NamespacePromptResult rewrites the URIs in a prompts/get result's messages.
func NamespacePromptResult(server string, res json.RawMessage) json.RawMessage {
	if !mayHaveURI(res) {
		return res
	}
	return rewriteArrayField(res, "messages", func(msg json.RawMessage) json.RawMessage {
		start, end, found, err := rawjson.FieldSpan(msg, "content")
		if err != nil || !found {
			return msg
		}
		out, err := rawjson.ReplaceField(msg, "content", namespaceContent(server, msg[start:end]))
		if err != nil {
			return msg
		}
		return out
	})
}

// NamespaceReadResult rewrites the uri of each item of resources/read's
// contents.
func NamespaceReadResult(server string, res json.RawMessage) json.RawMessage {
	return rewriteArrayField(res, "contents", func(item json.RawMessage) json.RawMessage {
		return namespaceURIField(server, item)
	})
}

// namespaceContent rewrites one content block: a resource_link's uri, or an
// embedded resource's resource.uri. Other blocks pass unchanged.
func namespaceContent(server string, item json.RawMessage) json.RawMessage {
	kind, err := rawjson.StringField(item, "type")
	if err != nil {
		return item
	}
	switch kind {
	case "resource_link":
		return namespaceURIField(server, item)
	case "resource":
		start, end, found, err := rawjson.FieldSpan(item, "resource")
		if err != nil || !found {
			return item
		}
		out, err := rawjson.ReplaceField(item, "resource", namespaceURIField(server, item[start:end]))
		if err != nil {
			return item
		}
		return out
	}
	return item
}

// namespaceURIField rewrites obj's top-level "uri".
func namespaceURIField(server string, obj json.RawMessage) json.RawMessage {
	return namespaceStringField(server, obj, "uri")
}

// namespaceStringField rewrites the URI in obj's top-level string field.
func namespaceStringField(server string, obj json.RawMessage, field string) json.RawMessage {
	uri, err := rawjson.StringField(obj, field)
	if err != nil || uri == "" {
		return obj
	}
	out, err := rawjson.ReplaceString(obj, field, naming.ResourceURI(server, uri))
	if err != nil {
		return obj
	}
	return out
}

// rewriteArrayField applies f to each element of obj's top-level array
// field. Anything unexpected leaves obj exactly as it was: what the upstream
// sent is always better than an error. Only the elements f changes are
// spliced in; the bytes around them, whitespace included, are kept, and
// when f changes nothing obj itself is returned.
func rewriteArrayField(obj json.RawMessage, field string, f func(json.RawMessage) json.RawMessage) json.RawMessage {
	start, end, found, err := rawjson.FieldSpan(obj, field)
	if err != nil || !found {
		return obj
	}
	arr := obj[start:end]
	dec := json.NewDecoder(bytes.NewReader(arr))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return obj // null, or not an array
	}
	var out []byte
	prev := 0
	for dec.More() {
		var item json.RawMessage
		if err := dec.Decode(&item); err != nil {
			return obj
		}
		itemEnd := int(dec.InputOffset())
		rewritten := f(item)
		if bytes.Equal(rewritten, item) {
			continue
		}
		out = append(out, arr[prev:itemEnd-len(item)]...)
		out = append(out, rewritten...)
		prev = itemEnd
	}
	if prev == 0 {
		return obj // f changed nothing
	}
	out = append(out, arr[prev:]...)
	res, err := rawjson.ReplaceField(obj, field, out)
	if err != nil {
		return obj
	}
	return res
}
