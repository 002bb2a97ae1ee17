package httpx

import (
	"net/http"
	"strings"
)

// BearerToken returns the token of an "Authorization: Bearer <token>"
// header. The scheme is compared without regard to case and may be followed
// by several spaces (RFC 7235 §2.1, RFC 6750 §2.1): "bearer <token>" is as
// valid as "Bearer <token>", and hosts send both.
func BearerToken(h http.Header) (string, bool) {
	scheme, token, ok := strings.Cut(h.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}
