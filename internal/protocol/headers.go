package protocol

import (
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/mcptrunk/mcptrunk/internal/rawjson"
)

// PrincipalName is what the Mcp-Name header mirrors at the stateless
// revision: the name of the tool or prompt, the URI of the resource, the id
// of the task. ok is false for a method that has none.
func PrincipalName(method string, params json.RawMessage) (string, bool) {
	var field string
	switch method {
	case "tools/call", "prompts/get":
		field = "name"
	case "resources/read":
		field = "uri"
	case "tasks/get", "tasks/update", "tasks/cancel":
		// The tasks extension's binding (SEP-2663): a balancer routes
		// every request of a task by it.
		field = "taskId"
	default:
		return "", false
	}
	// Found by scanning: params hold the arguments and, at the stateless
	// revision, a _meta with the client's capabilities, which decoding
	// params whole read through on every request, twice.
	start, end, found, err := rawjson.FieldSpan(params, field)
	var name *string
	if err != nil || !found || json.Unmarshal(params[start:end], &name) != nil || name == nil {
		return "", false
	}
	return *name, true
}

const headerB64Prefix, headerB64Suffix = "=?base64?", "?="

// HeaderValue encodes a name for an Mcp-* header as the transport
// specifies: as it is when it is plain visible ASCII without edge blanks,
// else (and when it would read as an encoded value) as =?base64?...?=.
func HeaderValue(s string) string {
	plain := s == "" || (s[0] != ' ' && s[0] != '\t' && s[len(s)-1] != ' ' && s[len(s)-1] != '\t')
	for i := 0; plain && i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			plain = false
		}
	}
	if plain && !(strings.HasPrefix(s, headerB64Prefix) && strings.HasSuffix(s, headerB64Suffix)) {
		return s
	}
	return headerB64Prefix + base64.StdEncoding.EncodeToString([]byte(s)) + headerB64Suffix
}

// ParseHeaderValue reverses HeaderValue; ok is false for a malformed
// encoded value.
func ParseHeaderValue(v string) (string, bool) {
	inner, ok := strings.CutPrefix(v, headerB64Prefix)
	if !ok {
		return v, true
	}
	inner, ok = strings.CutSuffix(inner, headerB64Suffix)
	if !ok {
		return v, true
	}
	b, err := base64.StdEncoding.DecodeString(inner)
	if err != nil {
		return "", false
	}
	return string(b), true
}
