package httpserve

import (
	"context"
	"errors"
	"net/http"

	"github.com/mcptrunk/mcptrunk/internal/accesstoken"
	"github.com/mcptrunk/mcptrunk/internal/httpx"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
)

// callerKey carries the identity of an admitted request's bearer;
// rawTokenKey its access token, which a session hands the trunk for token
// exchange only (proxy.SessionOptions.AccessToken).
type (
	callerKey   struct{}
	rawTokenKey struct{}
)

// rawTokenOf is the access token a request was admitted with; "" for one
// admitted otherwise.
func rawTokenOf(r *http.Request) string {
	v, _ := r.Context().Value(rawTokenKey{}).(string)
	return v
}

// callerOf is the identity a request's access token proved; nil for a
// request admitted by the static token or with no authentication set.
func callerOf(ctx context.Context) *accesstoken.Identity {
	id, _ := ctx.Value(callerKey{}).(*accesstoken.Identity)
	return id
}

// subjectOf names the caller in logs and binds sessions to it; "" when
// the request carried no access token.
func subjectOf(r *http.Request) string {
	if id := callerOf(r.Context()); id != nil {
		return id.Subject
	}
	return ""
}

// authenticate admits a request by the static token (a laptop's) or by an
// access token of the configured issuer (a team's), returning it with the
// caller's identity in its context; otherwise it answers 401, or 403 for
// a token without a required scope, with a WWW-Authenticate that points
// at the protected resource metadata, and returns nil.
func (h *Handler) authenticate(w http.ResponseWriter, r *http.Request) *http.Request {
	if r.Method == http.MethodOptions || (h.opts.Token == "" && h.opts.Auth == nil) {
		return r
	}
	if h.opts.Token != "" && h.hasToken(r) {
		return r
	}
	if h.opts.Auth == nil {
		h.refuse(w, r, http.StatusUnauthorized, `Bearer realm="mcptrunk"`, "a bearer token is required: send Authorization: Bearer <token>")
		return nil
	}
	raw, ok := httpx.BearerToken(r.Header)
	if !ok {
		h.refuse(w, r, http.StatusUnauthorized, h.opts.Auth.Challenge(nil), "an access token is required: sign in at the authorization server named by "+h.opts.Auth.MetadataURL())
		return nil
	}
	id, err := h.opts.Auth.Verify(r.Context(), raw)
	if err != nil {
		status := http.StatusUnauthorized
		if errors.Is(err, accesstoken.ErrScope) {
			status = http.StatusForbidden
		}
		// The reason (expired, audience, signature) is logged, never the token.
		h.logger.Info("access token refused", "reason", err.Error(), "client", clientAddr(r))
		h.refuse(w, r, status, h.opts.Auth.Challenge(err), "the access token was refused: "+errors.Unwrap(err).Error())
		return nil
	}
	return r.WithContext(context.WithValue(context.WithValue(r.Context(), callerKey{}, id), rawTokenKey{}, raw))
}

// refuse answers an unauthenticated request: a JSON-RPC error on the MCP
// endpoint, plain text elsewhere.
func (h *Handler) refuse(w http.ResponseWriter, r *http.Request, status int, challenge, msg string) {
	w.Header().Set("WWW-Authenticate", challenge)
	if r.URL.Path == h.opts.Path {
		rpcError(w, status, jsonrpc.CodeInvalidRequest, msg)
		return
	}
	http.Error(w, msg, status)
}

// serveResourceMetadata answers RFC 9728's document, without a token, at
// the well-known path and at its form suffixed with the MCP endpoint's
// path, which is where clients look first.
func (h *Handler) serveResourceMetadata() {
	if h.opts.Auth == nil {
		return
	}
	h.root.HandleFunc("GET "+accesstoken.WellKnown, h.opts.Auth.ServeMetadata)
	h.root.HandleFunc("GET "+accesstoken.WellKnown+h.opts.Path, h.opts.Auth.ServeMetadata)
}

// sessionOf finds the session a request names, only when it belongs to
// the request's caller: another user's session id gets the same 404 as
// an unknown one.
func (h *Handler) sessionOf(r *http.Request) *session {
	s := h.session(r.Header.Get(protocol.HeaderSessionID))
	if s == nil || s.subject != subjectOf(r) {
		return nil
	}
	return s
}
