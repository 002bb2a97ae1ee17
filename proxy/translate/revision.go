package translate

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
)

// This file is the host's revision, request by request: what a request's
// _meta says about the host at the stateless revision, and how a result is
// shaped for the revision it answers. A 2025-era host and a 2026-07-28 host
// get the same routed results, each in the form its revision defines.

// RequestMeta is what a request at the stateless revision says about the
// host in its reserved _meta keys.
type RequestMeta struct {
	Version    string
	Caps       map[string]json.RawMessage
	LogLevel   string
	ClientInfo json.RawMessage // as sent; decoded only when asked for (clientName)
}

// clientName is the name in the request's clientInfo ("" without one).
func (m RequestMeta) ClientName() string {
	if len(m.ClientInfo) == 0 {
		return ""
	}
	info, err := rawjson.Object(m.ClientInfo)
	if err != nil {
		return ""
	}
	var name string
	_ = decodeMetaString(info["name"], &name)
	return name
}

// ReadRequestMeta reads the reserved _meta keys of a request's params. A
// request without a protocolVersion key is at a 2025 revision (its host
// said everything at initialize): the zero RequestMeta. One at a revision
// the trunk does not speak is refused with -32022 and the revisions it does,
// so that the host can pick one.
func ReadRequestMeta(method string, params json.RawMessage) (RequestMeta, error) {
	if !rawjson.HasReservedMeta(params) {
		return RequestMeta{}, nil
	}
	return readReservedMeta(method, params)
}

// readReservedMeta is ReadRequestMeta of a request that has reserved _meta
// keys. It is a function of its own because its RequestMeta escapes (its
// strings are decoded into it): in ReadRequestMeta that would cost every
// 2025-era request an allocation for the zero value it returns.
func readReservedMeta(method string, params json.RawMessage) (RequestMeta, error) {
	var m RequestMeta
	start, end, found, err := rawjson.FieldSpan(params, "_meta")
	if err != nil || !found {
		return m, nil // not an object, or no _meta: the method's own checks say so
	}
	// Every request of a stateless host comes here: the members are found
	// by scanning, without a map, and only the two strings decoded.
	var version, level, caps json.RawMessage
	err = rawjson.EachMember(params[start:end], func(key []byte, value json.RawMessage) {
		switch string(key) {
		case protocol.MetaProtocolVersion:
			version = value
		case protocol.MetaLogLevel:
			level = value
		case protocol.MetaClientInfo:
			m.ClientInfo = value
		case protocol.MetaClientCapabilities:
			caps = value
		}
	})
	for _, f := range []struct {
		key  string
		raw  json.RawMessage
		into *string
	}{{protocol.MetaProtocolVersion, version, &m.Version}, {protocol.MetaLogLevel, level, &m.LogLevel}} {
		if err == nil && decodeMetaString(f.raw, f.into) != nil {
			err = fmt.Errorf("%q must be a string", f.key)
		}
	}
	if err == nil && caps != nil && string(caps) != "null" {
		m.Caps, err = rawjson.Object(caps)
	}
	if err != nil {
		return RequestMeta{}, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "%s: params._meta: %v", method, err)
	}
	if m.Version != "" && !protocol.Known(m.Version) {
		data, _ := json.Marshal(map[string]any{"supported": protocol.Supported, "requested": m.Version})
		return RequestMeta{}, &jsonrpc.Error{
			Code:    protocol.CodeUnsupportedVersion,
			Message: fmt.Sprintf("%s: protocol version %q is not supported by mcptrunk", method, m.Version),
			Data:    data,
		}
	}
	if protocol.IsStateless(m.Version) && (caps == nil || string(caps) == "null") {
		// The revision requires them: a request that names none cannot be
		// told apart from one whose client can do nothing.
		return RequestMeta{}, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "%s: params._meta: %q is required at %s", method, protocol.MetaClientCapabilities, protocol.Stateless)
	}
	return m, nil
}

// decodeMetaString decodes a string value of _meta, when present.
func decodeMetaString(raw json.RawMessage, into *string) error {
	if raw == nil {
		return nil
	}
	if s, ok := rawjson.PlainString(raw); ok {
		*into = s
		return nil
	}
	return json.Unmarshal(raw, into)
}

// removedMessage says what replaced a method the stateless revision
// removed, for the -32601 a host at that revision gets for it.
var removedMessage = map[string]string{
	"ping":                  "there is no ping at this revision",
	"logging/setLevel":      "send the level as _meta " + protocol.MetaLogLevel + " on each request",
	"resources/subscribe":   "use " + protocol.MethodListen + " with notifications." + protocol.ListenResourceSubscribers,
	"resources/unsubscribe": "end the " + protocol.MethodListen + " request (notifications/cancelled)",
	"initialize":            "use " + protocol.MethodDiscover,
}

// RemovedError is the answer to a method the stateless revision removed,
// or nil when method is still there.
func RemovedError(method string) error {
	if !protocol.RemovedInStateless[method] {
		return nil
	}
	return jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "method %q was removed in %s: %s", method, protocol.Stateless, removedMessage[method])
}

// listMethods are the results the trunk assembles from every upstream: the
// cache hints on them describe the aggregate, never one upstream.
var listMethods = map[string]bool{
	"tools/list": true, "prompts/list": true, "resources/list": true, "resources/templates/list": true,
}

// Cache hints of the trunk's lists at the stateless revision. ttlMs 0 (stale
// at once) because any upstream may change its list at any moment, and a
// host must never keep serving the old aggregate from its cache; "private"
// because the aggregate depends on this trunk's config, policy and
// lockfile, so no intermediary may share it with another client.
var (
	listTTL   = json.RawMessage(`0`)
	listScope = json.RawMessage(`"private"`)
)

// StatelessResult shapes a routed result for a host at the stateless
// revision: the upstream's reserved _meta keys are dropped (they describe
// the upstream's hop, not the trunk's), resultType is set to complete unless
// the result already has one (multi-round-trip results come shaped), and
// the lists carry the trunk's cache hints.
func StatelessResult(method string, res json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(res)) == 0 || bytes.Equal(bytes.TrimSpace(res), []byte("null")) {
		res = json.RawMessage(`{}`)
	}
	var err error
	if rawjson.HasReservedMeta(res) {
		if res, err = rawjson.ReplaceReservedMeta(res, nil); err != nil {
			return nil, shapeError(method, err)
		}
	}
	if !rawjson.HasField(res, protocol.FieldResultType) {
		if res, err = rawjson.ReplaceField(res, protocol.FieldResultType, []byte(`"`+protocol.ResultTypeComplete+`"`)); err != nil {
			return nil, shapeError(method, err)
		}
	}
	if method == "resources/read" {
		// The revision requires cache hints on a read: the server's own
		// when it gave them, else none to rely on (0, private), as the
		// trunk's own resources have.
		for _, hint := range []struct {
			key   string
			value json.RawMessage
		}{{"ttlMs", listTTL}, {"cacheScope", listScope}} {
			if !rawjson.HasField(res, hint.key) {
				if res, err = rawjson.ReplaceField(res, hint.key, hint.value); err != nil {
					return nil, shapeError(method, err)
				}
			}
		}
	}
	if listMethods[method] {
		if res, err = rawjson.ReplaceField(res, "ttlMs", listTTL); err != nil {
			return nil, shapeError(method, err)
		}
		if res, err = rawjson.ReplaceField(res, "cacheScope", listScope); err != nil {
			return nil, shapeError(method, err)
		}
	}
	return res, nil
}

// statelessOnly are the result members a 2025 revision does not define.
var statelessOnly = []string{protocol.FieldResultType, "ttlMs", "cacheScope"}

// Result2025 shapes a result for a host at a 2025-era revision: an
// upstream that speaks the stateless revision sends members and reserved
// _meta keys that revision does not have; they are dropped, but for the
// related task of 2025-11-25's tasks (which the trunk rewrites, tasks.go). The byte checks
// come first, so a result without any (the usual case) is returned as it
// came, without a scan. A result that is not an object passes as it did
// before the trunk spoke the stateless revision.
func Result2025(res json.RawMessage) json.RawMessage {
	out := res
	if rawjson.HasReservedMeta(out) {
		var keep map[string]json.RawMessage // the reserved keys 2025-11-25 defines
		if related := rawjson.MetaValue(out, RelatedTaskKey); related != nil {
			keep = map[string]json.RawMessage{RelatedTaskKey: related}
		}
		stripped, err := rawjson.ReplaceReservedMeta(out, keep)
		if err != nil {
			return res
		}
		out = stripped
	}
	for _, k := range statelessOnly {
		if bytes.Contains(out, []byte(`"`+k+`"`)) {
			stripped, err := rawjson.DeleteFields(out, statelessOnly...)
			if err != nil {
				return res
			}
			return stripped
		}
	}
	return out
}

// shapeError reports a result the trunk could not reshape: it is not a JSON
// object, so the host could not have read it either.
func shapeError(method string, err error) error {
	return jsonrpc.Errorf(jsonrpc.CodeInternalError, "the result of %s is not a JSON object the trunk can pass on: %v", method, err)
}
