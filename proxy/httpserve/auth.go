package httpserve

import (
	"errors"
	"net/http"
	"strings"

	"github.com/mcptrunk/mcptrunk/internal/accesstoken"
	"github.com/mcptrunk/mcptrunk/internal/httpx"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
)

// admitted is what the guard established of a request it let through,
// handed to the route that serves it as a value: who the caller is, and
// what it proved that with.
type admitted struct {
	caller caller
	// token is the access token it was admitted with ("" for one admitted
	// otherwise), which a session hands the trunk for token exchange only
	// (proxy.SessionOptions.AccessToken).
	token string
	// staticToken: it carried Options.Token, the operator's.
	staticToken bool
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

// profileOf is the profile a path names (<path>/p/<name>), "" for any
// other path.
func (h *Handler) profileOf(path string) string {
	name, ok := strings.CutPrefix(path, h.opts.Path+"/p/")
	if !ok || strings.Contains(name, "/") {
		return ""
	}
	return name
}

// verifierFor is the verifier of the resource a request reached, by the
// profile its path names (profileOf): the trunk's, or a known profile's.
func (h *Handler) verifierFor(profile string) *accesstoken.Verifier {
	if profile != "" && h.hasProfile(profile) {
		return h.opts.Auth.Profile(profile)
	}
	return h.opts.Auth
}

func (h *Handler) hasProfile(name string) bool {
	return h.opts.Profiles != nil && h.opts.Profiles(name)
}

// authenticate admits a request by the static token (a laptop's) or by an
// access token of the configured issuer (a team's), returning who it
// comes from; otherwise it answers 401, or 403 for a token without a
// required scope, with a WWW-Authenticate that points at the protected
// resource metadata, and returns false. The profile is the one whose
// endpoint the path names, the one whose verifier checked the token.
func (h *Handler) authenticate(w http.ResponseWriter, r *http.Request) (admitted, bool) {
	a := admitted{caller: caller{profile: h.profileOf(r.URL.Path)}, staticToken: h.opts.Token != "" && h.hasToken(r)}
	if r.Method == http.MethodOptions || (h.opts.Token == "" && h.opts.Auth == nil) || a.staticToken {
		return a, true
	}
	if h.opts.Auth == nil {
		h.refuse(w, r, http.StatusUnauthorized, `Bearer realm="mcptrunk"`, "a bearer token is required: send Authorization: Bearer <token>")
		return admitted{}, false
	}
	verifier := h.verifierFor(a.caller.profile)
	raw, ok := httpx.BearerToken(r.Header)
	if !ok {
		h.refuse(w, r, http.StatusUnauthorized, verifier.Challenge(nil), "an access token is required: sign in at the authorization server named by "+verifier.MetadataURL())
		return admitted{}, false
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
		return admitted{}, false
	}
	a.caller.subject, a.caller.claims, a.token = id.Subject, id.Claims, raw
	return a, true
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
// the request's caller (a): another user's session id gets the same 404
// as an unknown one.
func (h *Handler) sessionOf(r *http.Request, a admitted) *session {
	s := h.session(r.Header.Get(protocol.HeaderSessionID))
	if c := a.caller; s == nil || s.caller.subject != c.subject || s.caller.profile != c.profile {
		return nil
	}
	return s
}
