package httpserve

import (
	"context"
	"errors"
	"net/http"
	"strings"

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

// caller is who a request comes from: the subject and claims its access
// token proved (none for the static token or no authentication), and the
// profile whose endpoint it reached ("" for the trunk's own). A session
// is bound to the caller that opened it.
type caller struct {
	subject string
	claims  map[string]any
	profile string
}

// callerOf is the caller of an admitted request.
func callerOf(r *http.Request) caller {
	c := caller{profile: r.PathValue("profile")}
	if id, _ := r.Context().Value(callerKey{}).(*accesstoken.Identity); id != nil {
		c.subject, c.claims = id.Subject, id.Claims
	}
	return c
}

// profileOf is the profile a path names (<path>/p/<name>), "" for any
// other path.
func (h *Handler) profileOf(path string) string {
	name, ok := strings.CutPrefix(path, h.opts.Path+"/p/")
	if !ok || strings.Contains(name, "/") {
		return ""
	}
	return name
}

// verifierFor is the verifier of the resource a request reached: the
// trunk's, or a known profile's.
func (h *Handler) verifierFor(r *http.Request) *accesstoken.Verifier {
	if p := h.profileOf(r.URL.Path); p != "" && h.hasProfile(p) {
		return h.opts.Auth.Profile(p)
	}
	return h.opts.Auth
}

func (h *Handler) hasProfile(name string) bool {
	return h.opts.Profiles != nil && h.opts.Profiles(name)
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
	verifier := h.verifierFor(r)
	raw, ok := httpx.BearerToken(r.Header)
	if !ok {
		h.refuse(w, r, http.StatusUnauthorized, verifier.Challenge(nil), "an access token is required: sign in at the authorization server named by "+verifier.MetadataURL())
		return nil
	}
	id, err := verifier.Verify(r.Context(), raw)
	if err != nil {
		status := http.StatusUnauthorized
		if errors.Is(err, accesstoken.ErrScope) {
			status = http.StatusForbidden
		}
		// The reason (expired, audience, signature) is logged, never the token.
		h.logger.Info("access token refused", "reason", err.Error(), "client", clientAddr(r))
		h.refuse(w, r, status, verifier.Challenge(err), "the access token was refused: "+errors.Unwrap(err).Error())
		return nil
	}
	return r.WithContext(context.WithValue(context.WithValue(r.Context(), callerKey{}, id), rawTokenKey{}, raw))
}

// refuse answers an unauthenticated request: a JSON-RPC error on the MCP
// endpoint, plain text elsewhere.
func (h *Handler) refuse(w http.ResponseWriter, r *http.Request, status int, challenge, msg string) {
	w.Header().Set("WWW-Authenticate", challenge)
	if r.URL.Path == h.opts.Path || h.profileOf(r.URL.Path) != "" {
		rpcError(w, status, jsonrpc.CodeInvalidRequest, msg)
		return
	}
	http.Error(w, msg, status)
}

// serveResourceMetadata answers RFC 9728's document, without a token, at
// the well-known path and at its form suffixed with the MCP endpoint's
// path, which is where clients look first; each profile's at its own.
func (h *Handler) serveResourceMetadata() {
	if h.opts.Auth == nil {
		return
	}
	h.root.HandleFunc("GET "+accesstoken.WellKnown, h.opts.Auth.ServeMetadata)
	h.root.HandleFunc("GET "+accesstoken.WellKnown+h.opts.Path, h.opts.Auth.ServeMetadata)
	h.root.HandleFunc("GET "+accesstoken.WellKnown+h.opts.Path+"/p/{profile}", func(w http.ResponseWriter, r *http.Request) {
		if p := r.PathValue("profile"); h.hasProfile(p) {
			h.opts.Auth.Profile(p).ServeMetadata(w, r)
			return
		}
		http.NotFound(w, r)
	})
}

// sessionOf finds the session a request names, only when it belongs to
// the request's caller: another user's session id gets the same 404 as
// an unknown one.
func (h *Handler) sessionOf(r *http.Request) *session {
	s := h.session(r.Header.Get(protocol.HeaderSessionID))
	if c := callerOf(r); s == nil || s.caller.subject != c.subject || s.caller.profile != c.profile {
		return nil
	}
	return s
}
