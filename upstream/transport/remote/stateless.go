package remote

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/mcptrunk/mcptrunk/internal/protocol"
)

// Streamable HTTP at the stateless revision (2026-07-28): there is no
// session (no Mcp-Session-Id, no initialize to replay, no DELETE) and no
// standalone GET stream; a server sends notifications only on the reply
// stream of a subscriptions/listen POST, which stays open for as long as
// the Client holds the request (no exchange timeout applies to a request's
// POST). Every message carries Mcp-Protocol-Version, and every request
// Mcp-Method and, for tools/call, prompts/get and resources/read, Mcp-Name,
// mirroring its body: the server rejects a mismatch (-32020), so both are
// taken from the very frame being sent.

// SetProtocolVersion tells the transport the revision the Client speaks on
// this connection: the stateless one (before its server/discover, so that
// request already goes with the stateless headers), or "" when the Client
// falls back to initialize, which then negotiates the version as before.
func (t *Streamable) SetProtocolVersion(version string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if protocol.IsStateless(version) {
		t.stateless, t.protoVersion = true, version
		return
	}
	t.stateless, t.protoVersion = false, ""
}

func (t *Streamable) isStateless() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.stateless
}

// postFrame POSTs one frame with the headers of its revision: the
// revision in the frame's own _meta when it has one (a request at the
// stateless revision always does), else the connection's.
func (t *Streamable) postFrame(ctx context.Context, f frame, session, protoVersion string) (*http.Response, error) {
	version := frameVersion(f)
	if version == "" {
		version = protoVersion
	}
	if !protocol.IsStateless(version) {
		return t.post(ctx, f.body, session, version)
	}
	req, err := t.newRequest(ctx, http.MethodPost, t.url, f.body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(protocol.HeaderProtocolVersion, version)
	if f.method != "" {
		req.Header.Set(protocol.HeaderMethod, f.method)
	}
	if name, ok := principalName(f.method, f.params); ok {
		req.Header.Set(protocol.HeaderName, headerValue(name))
	}
	return t.do(req)
}

// frameVersion reads the revision a frame's params carry in _meta.
func frameVersion(f frame) string {
	if f.kind != frameRequest || !strings.Contains(string(f.params), protocol.MetaProtocolVersion) {
		return ""
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(f.params, &p) != nil {
		return ""
	}
	var v string
	_ = json.Unmarshal(p.Meta[protocol.MetaProtocolVersion], &v)
	return v
}

// principalName is what Mcp-Name mirrors: the name of the tool or prompt,
// the URI of the resource.
func principalName(method string, params json.RawMessage) (string, bool) {
	var p struct {
		Name *string `json:"name"`
		URI  *string `json:"uri"`
	}
	switch method {
	case "tools/call", "prompts/get":
		if json.Unmarshal(params, &p) == nil && p.Name != nil {
			return *p.Name, true
		}
	case "resources/read":
		if json.Unmarshal(params, &p) == nil && p.URI != nil {
			return *p.URI, true
		}
	}
	return "", false
}

// headerValue encodes a name for a header as the transport specifies: as
// it is when it is plain visible ASCII without edge blanks, else (and when
// it would read as an encoded value) as =?base64?...?=.
func headerValue(s string) string {
	const prefix, suffix = "=?base64?", "?="
	plain := s == "" || (s[0] != ' ' && s[0] != '\t' && s[len(s)-1] != ' ' && s[len(s)-1] != '\t')
	for i := 0; plain && i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			plain = false
		}
	}
	if plain && !(strings.HasPrefix(s, prefix) && strings.HasSuffix(s, suffix)) {
		return s
	}
	return prefix + base64.StdEncoding.EncodeToString([]byte(s)) + suffix
}
