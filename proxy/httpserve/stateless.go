package httpserve

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
)

// stateless answers a request of the stateless revision (or a discover
// probe): it gets a session of its own for as long as it is answered, so
// that its progress, its log messages and, for a listen, its
// notifications come back on this exchange and nowhere else. The client
// going away cancels it. a is who sent it.
func (h *Handler) stateless(w http.ResponseWriter, r *http.Request, a admitted, env jsonrpc.Envelope, line []byte) {
	msg := headerMismatch(r, env)
	if msg == "" {
		msg = h.paramHeaderMismatch(r, a.caller, env)
	}
	if msg != "" {
		rpcErrorID(w, http.StatusBadRequest, env.ID, protocol.CodeHeaderMismatch, msg)
		return
	}
	if env.IsRequest() && protocol.IsStateless(r.Header.Get(protocol.HeaderProtocolVersion)) && rawjson.MetaString(env.Params, protocol.MetaProtocolVersion) == "" {
		rpcErrorID(w, http.StatusBadRequest, env.ID, jsonrpc.CodeInvalidParams, fmt.Sprintf("header %s says %s, and the request's _meta has no %s", protocol.HeaderProtocolVersion, protocol.Stateless, protocol.MetaProtocolVersion))
		return
	}
	if !env.IsRequest() {
		w.WriteHeader(http.StatusAccepted) // no session to tell
		return
	}
	limit := int64(h.opts.MaxSessions * h.opts.MaxInFlight)
	if h.statelessInFlight.Add(1) > limit {
		h.statelessInFlight.Add(-1)
		rpcError(w, http.StatusServiceUnavailable, jsonrpc.CodeInternalError, fmt.Sprintf("too many requests in flight: the trunk answers at most %d stateless requests at once", limit))
		return
	}
	defer h.statelessInFlight.Add(-1)
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		rpcError(w, http.StatusServiceUnavailable, jsonrpc.CodeInternalError, reasonShutdown)
		return
	}
	s := h.startSession("", clientAddr(r), a.caller, true)
	s.noteToken(a)
	h.perRequest[s] = struct{}{}
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.perRequest, s)
		h.mu.Unlock()
		s.close("the request's exchange ended")
	}()
	stop := context.AfterFunc(r.Context(), func() { s.close("the client went away") })
	defer stop()
	st := s.newStream()
	st.listen = env.Method == protocol.MethodListen
	s.router.expect(env.ID, progressTokenOf(env.Params), st)
	if err := h.answer(w, r, s, st, line); err != nil {
		rpcError(w, http.StatusServiceUnavailable, jsonrpc.CodeInternalError, "the trunk is shutting down")
	}
}

// headerMismatch checks the stateless revision's headers against the body:
// each one sent must say what the body says, and a request at that
// revision must send Mcp-Method, and Mcp-Name when its body names a tool,
// prompt or resource. It returns what is wrong, or "". A discover probe
// that says no revision at all is let through.
func headerMismatch(r *http.Request, env jsonrpc.Envelope) string {
	required := env.IsRequest() && (protocol.IsStateless(rawjson.MetaString(env.Params, protocol.MetaProtocolVersion)) ||
		protocol.IsStateless(r.Header.Get(protocol.HeaderProtocolVersion)))
	if required && r.Header.Get(protocol.HeaderMethod) == "" {
		return fmt.Sprintf("header %s is missing: at %s every request names its method there", protocol.HeaderMethod, protocol.Stateless)
	}
	if name, ok := protocol.PrincipalName(env.Method, env.Params); required && ok && r.Header.Get(protocol.HeaderName) == "" {
		return fmt.Sprintf("header %s is missing: the body's %s names %q", protocol.HeaderName, env.Method, name)
	}
	if v := r.Header.Get(protocol.HeaderProtocolVersion); v != "" {
		if body := rawjson.MetaString(env.Params, protocol.MetaProtocolVersion); body != "" && body != v {
			return fmt.Sprintf("header %s %q does not match the body's _meta %s %q", protocol.HeaderProtocolVersion, v, protocol.MetaProtocolVersion, body)
		}
	}
	if v := r.Header.Get(protocol.HeaderMethod); v != "" && v != env.Method {
		return fmt.Sprintf("header %s %q does not match the body's method %q", protocol.HeaderMethod, v, env.Method)
	}
	if v := r.Header.Get(protocol.HeaderName); v != "" {
		name, ok := protocol.PrincipalName(env.Method, env.Params)
		got, valid := protocol.ParseHeaderValue(v)
		if !valid {
			return fmt.Sprintf("header %s is not a valid encoded value", protocol.HeaderName)
		}
		if ok && got != name {
			return fmt.Sprintf("header %s %q does not match the body's %q", protocol.HeaderName, got, name)
		}
	}
	return ""
}

// errorStatus is the HTTP status the stateless revision's transport gives
// a JSON-RPC error response: 404 for a method the server does not have, 400
// for invalid params, an unsupported revision, a capability the client did
// not declare or a header that disagrees with the body. It is 0 (the
// exchange's 200) for any other message.
func errorStatus(msg []byte) int {
	start, end, found, err := rawjson.FieldSpan(msg, "error")
	if err != nil || !found {
		return 0
	}
	var e struct {
		Code int `json:"code"`
	}
	if json.Unmarshal(msg[start:end], &e) != nil {
		return 0
	}
	switch e.Code {
	case jsonrpc.CodeMethodNotFound:
		return http.StatusNotFound
	case jsonrpc.CodeInvalidParams, protocol.CodeUnsupportedVersion, protocol.CodeMissingClientCapabilities, protocol.CodeHeaderMismatch:
		return http.StatusBadRequest
	}
	return 0
}
