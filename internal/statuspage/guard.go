package statuspage

import (
	"crypto/subtle"
	"net/http"
	"net/url"
	"strings"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/httpx"
)

// Guard admits only requests a browser on this machine makes to a
// loopback listener: the Host must name a loopback address (a page on
// another site that rebinds its name to 127.0.0.1 sends its own name), an
// Origin, when sent, must be this same origin (no other page may read the
// events), and, when token is not empty, the request must carry it as
// ?token= or an Authorization bearer, so another user of the machine who
// can reach the port still cannot read the page.
func Guard(next http.Handler, token string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !config.IsLoopbackHostPort(r.Host) {
			http.Error(w, "forbidden: this listener answers only on a loopback address", http.StatusForbidden)
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !sameOrigin(o, r.Host) {
			http.Error(w, "forbidden: cross-origin requests are refused", http.StatusForbidden)
			return
		}
		if token != "" && !hasToken(r, token) {
			http.Error(w, "the status page needs the token printed by mcptrunk", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func sameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && strings.EqualFold(u.Host, host)
}

func hasToken(r *http.Request, token string) bool {
	got := r.URL.Query().Get("token")
	if bearer, ok := httpx.BearerToken(r.Header); ok {
		got = bearer
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(token)) == 1
}
