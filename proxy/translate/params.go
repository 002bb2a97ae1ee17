package translate

import (
	"bytes"
	"encoding/json"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
)

// Checking the shape of a host's params. A request whose params the trunk
// cannot route is answered -32602 with the member named, before anything
// reaches an upstream: a host that sent {"name": 5} learns that
// params.name must be a string, not that no tool is called "".

// RequiredString returns params' string member field, or an invalid-params
// error naming it (what describes the value, e.g. "the tool's name").
func RequiredString(method string, params json.RawMessage, field, what string) (string, error) {
	s, err := rawjson.StringField(params, field)
	if err == nil && s != "" {
		return s, nil
	}
	if e := paramsShape(method, params); e != nil {
		return "", e
	}
	start, end, found, _ := rawjson.FieldSpan(params, field)
	switch {
	case !found:
		return "", jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "%s: params.%s is missing (%s)", method, field, what)
	case err != nil:
		return "", jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "%s: params.%s must be a string (%s), got %s", method, field, what, jsonKind(params[start:end]))
	}
	return "", jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "%s: params.%s is empty (%s)", method, field, what)
}

// RequiredName is RequiredString of params.name, the name of a kind of item
// ("tool", "prompt"), whose description ("the tool's name") is built only
// for the error, so that a request with a name allocates nothing for it.
func RequiredName(method string, params json.RawMessage, kind string) (string, error) {
	if s, err := rawjson.StringField(params, "name"); err == nil && s != "" {
		return s, nil
	}
	return RequiredString(method, params, "name", "the "+kind+"'s name")
}

// URIParams is the params of a request about one resource: the trunk's own
// resources/subscribe and resources/unsubscribe.
func URIParams(uri string) json.RawMessage {
	out, _ := json.Marshal(map[string]string{"uri": uri})
	return out
}

// OptionalObject checks that params' member field, when present and not
// null, is an object.
func OptionalObject(method string, params json.RawMessage, field string) error {
	start, end, found, err := rawjson.FieldSpan(params, field)
	if err != nil || !found {
		return nil // the shape was checked by requiredString already
	}
	if v := params[start:end]; v[0] != '{' && !bytes.Equal(v, []byte("null")) {
		return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "%s: params.%s must be an object, got %s", method, field, jsonKind(v))
	}
	return nil
}

// paramsShape reports params that are not a JSON object.
func paramsShape(method string, params json.RawMessage) error {
	p := bytes.TrimSpace(params)
	if len(p) == 0 || bytes.Equal(p, []byte("null")) {
		return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "%s: params are missing", method)
	}
	if p[0] != '{' || !json.Valid(p) {
		return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "%s: params must be an object, got %s", method, jsonKind(p))
	}
	return nil
}

// jsonKind names the type of a JSON value, for messages.
func jsonKind(v []byte) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "nothing"
	}
	switch c := v[0]; {
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == '"':
		return "a string"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	}
	return "a number"
}
