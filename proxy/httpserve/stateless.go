package httpserve

import (
	"context"
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
// going away cancels it.
func (h *Handler) stateless(w http.ResponseWriter, r *http.Request, env jsonrpc.Envelope, line []byte) {
	if msg := headerMismatch(r, env); msg != "" {
		rpcError(w, http.StatusBadRequest, protocol.CodeHeaderMismatch, msg)
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
	closed := h.closed
	h.mu.Unlock()
	if closed {
		rpcError(w, http.StatusServiceUnavailable, jsonrpc.CodeInternalError, "the trunk is shutting down")
		return
	}
	s := h.startSession("", true)
	defer func() {
		s.close()
		s.wait(context.Background())
	}()
	stop := context.AfterFunc(r.Context(), s.close)
	defer stop()
	st := s.newStream()
	s.router.expect(env.ID, progressTokenOf(env.Params), st)
	if err := s.deliver(line); err != nil {
		rpcError(w, http.StatusServiceUnavailable, jsonrpc.CodeInternalError, "the trunk is shutting down")
		return
	}
	h.reply(w, r, s, st)
}

// headerMismatch checks the stateless revision's headers against the body:
// each one sent must say what the body says. It returns what is wrong, or "".
func headerMismatch(r *http.Request, env jsonrpc.Envelope) string {
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
