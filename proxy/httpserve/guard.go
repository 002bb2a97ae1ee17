package httpserve

import (
	"crypto/subtle"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/httpx"

	"github.com/mcptrunk/mcptrunk/internal/protocol"
)

// guard admits a request only when it may reach the trunk (the MCP
// transport's security rules, and the OWASP MCP list's):
//   - Host: on a loopback listener it must name this machine, so that a
//     web page whose DNS name was rebound to 127.0.0.1 gets 403;
//   - Origin: a browser's request from an origin other than the listener's
//     own and the allowed ones gets 403;
//   - the token, when one is set: "Authorization: Bearer <token>",
//     compared in constant time, else 401 with WWW-Authenticate. A browser
//     page (the status page) may carry it as ?token= instead, since an
//     EventSource cannot set headers; never on the MCP endpoint. With
//     Options.Auth, an access token of the team's issuer (auth.go).
//
// A request refused is answered before its body is read, and its
// connection closed without reading it: net/http would otherwise read up
// to 256 KB of the body, before and after the answer, to keep the
// connection for a client that has not shown a token. So is an admitted
// request whose body was not read to its end (too slow, too large, or of
// no use to its handler): net/http would read the rest with no deadline,
// and a client that never sends it would hold the connection forever.
//
// What it established of an admitted request (admitted) is handed to next
// as a value.
func (h *Handler) guard(next route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		passed := false
		body := &bodyEnd{ReadCloser: r.Body}
		if r.ContentLength != 0 {
			w.Header().Set("Connection", "close") // removed below once admitted
			defer func() {
				if !passed || !body.read.Load() { // what is left of the body fails at once, and the connection ends
					w.Header().Set("Connection", "close")
					_ = http.NewResponseController(w).SetReadDeadline(time.Now())
				}
			}()
		}
		if h.opts.LoopbackOnly && !config.IsLoopbackHostPort(r.Host) {
			http.Error(w, "forbidden: the Host header does not name this machine", http.StatusForbidden)
			return
		}
		origin := r.Header.Get("Origin")
		if origin != "" && !sameOrigin(origin, r) && !slices.Contains(h.opts.AllowedOrigins, origin) {
			http.Error(w, "forbidden: requests from origin "+origin+" are not allowed (see trunk.http.allowedOrigins)", http.StatusForbidden)
			return
		}
		if origin != "" && slices.Contains(h.opts.AllowedOrigins, origin) {
			cors(w, origin)
		}
		a, ok := h.authenticate(w, r)
		if !ok {
			return
		}
		w.Header().Del("Connection")
		passed = true
		if r.ContentLength != 0 {
			r = r.WithContext(r.Context()) // a copy: net/http keeps its own Body
			r.Body = body
		}
		next(w, r, a)
	})
}

// bodyEnd is a request's body that notes whether it was read to its end.
type bodyEnd struct {
	io.ReadCloser
	read atomic.Bool
}

func (b *bodyEnd) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.read.Store(true)
	}
	return n, err
}

func (h *Handler) hasToken(r *http.Request) bool {
	got, ok := httpx.BearerToken(r.Header) // the scheme in any case (RFC 7235)
	if !ok && r.URL.Path != h.opts.Path && h.profileOf(r.URL.Path) == "" && r.Method == http.MethodGet {
		got = r.URL.Query().Get("token")
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(h.opts.Token)) == 1
}

// cors lets an allowed origin's page read the answers and the session id.
func cors(w http.ResponseWriter, origin string) {
	hd := w.Header()
	hd.Set("Access-Control-Allow-Origin", origin)
	hd.Add("Vary", "Origin")
	hd.Set("Access-Control-Expose-Headers", protocol.HeaderSessionID)
}

// preflight answers a CORS preflight from an allowed origin (the guard
// refused any other).
func (h *Handler) preflight(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Origin") == "" {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	hd := w.Header()
	hd.Set("Access-Control-Allow-Methods", "GET, POST, DELETE")
	hd.Set("Access-Control-Allow-Headers", strings.Join([]string{"Authorization", "Content-Type", "Last-Event-ID",
		protocol.HeaderSessionID, protocol.HeaderProtocolVersion, protocol.HeaderMethod, protocol.HeaderName}, ", "))
	w.WriteHeader(http.StatusNoContent)
}

// sameOrigin reports whether a browser's Origin is the listener's own.
func sameOrigin(origin string, r *http.Request) bool {
	u, err := url.Parse(origin)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && strings.EqualFold(u.Host, r.Host)
}
