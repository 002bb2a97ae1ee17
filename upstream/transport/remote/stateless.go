package remote

import (
	"context"
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
	if name, ok := protocol.PrincipalName(f.method, f.params); ok {
		req.Header.Set(protocol.HeaderName, protocol.HeaderValue(name))
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
