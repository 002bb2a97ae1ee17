package httpserve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/proxy"
)

// paramHeaderPrefix starts the headers that mirror tool arguments at the
// stateless revision: an argument whose schema says "x-mcp-header": "X"
// travels in the body and as Mcp-Param-X, so that a load balancer can route
// on it without reading the body.
const paramHeaderPrefix = "Mcp-Param-"

// paramHeaderMismatch checks a stateless tools/call's Mcp-Param-* headers
// against its arguments, as the revision requires of the server: each
// argument its tool (the one its caller c sees) mirrors in a header must
// come with that header, whose value (literal, or =?base64?...?= decoded
// strictly) equals the argument's. It returns what is wrong, or "".
func (h *Handler) paramHeaderMismatch(r *http.Request, c caller, env jsonrpc.Envelope) string {
	if env.Method != "tools/call" {
		return ""
	}
	name, err := rawjson.StringField(env.Params, "name")
	if err != nil || name == "" {
		return ""
	}
	client, _ := rawjson.StringField(rawjson.MetaValue(env.Params, protocol.MetaClientInfo), "name")
	mirrored := h.trunk.ToolHeaderParams(name, client, &proxy.SessionOptions{Subject: c.subject, Claims: c.claims, Profile: c.profile})
	if len(mirrored) == 0 {
		return ""
	}
	var args map[string]json.RawMessage
	if start, end, found, err := rawjson.FieldSpan(env.Params, "arguments"); err == nil && found {
		_ = json.Unmarshal(env.Params[start:end], &args)
	}
	names := make([]string, 0, len(mirrored))
	for arg := range mirrored {
		names = append(names, arg)
	}
	sort.Strings(names) // the first problem, the same every time
	for _, arg := range names {
		header := paramHeaderPrefix + mirrored[arg]
		raw, present := args[arg]
		v, sent := r.Header[http.CanonicalHeaderKey(header)]
		switch {
		case !present:
			continue // nothing to mirror
		case !sent:
			return fmt.Sprintf("header %s is missing: tool %q mirrors its argument %q there", header, name, arg)
		}
		got, ok := protocol.ParseHeaderValue(v[0])
		if !ok {
			return fmt.Sprintf("header %s is not a valid encoded value (=?base64?...?= with padded standard base64)", header)
		}
		if want := argumentText(raw); got != want {
			return fmt.Sprintf("header %s does not match tool %q's argument %q in the body", header, name, arg)
		}
	}
	return ""
}

// argumentText is an argument as its header carries it: a string's value,
// anything else as its JSON text.
func argumentText(raw json.RawMessage) string {
	if s, ok := rawjson.PlainString(raw); ok {
		return s
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}
