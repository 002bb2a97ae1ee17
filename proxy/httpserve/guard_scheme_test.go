package httpserve

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// The bearer scheme is compared without regard to case (RFC 7235 §2.1):
// hosts that send "bearer <token>" are let in; another scheme is not.
func TestGuardBearerSchemeCase(t *testing.T) {
	h := &Handler{opts: Options{Path: "/mcp", Token: "secret", LoopbackOnly: true}.withDefaults()}
	g := h.guard(func(w http.ResponseWriter, _ *http.Request, _ admitted) { w.WriteHeader(http.StatusTeapot) })
	for header, want := range map[string]int{
		"bearer secret":  http.StatusTeapot,
		"BEARER secret":  http.StatusTeapot,
		"Bearer  secret": http.StatusTeapot,
		"Basic secret":   http.StatusUnauthorized,
		"bearer secreT":  http.StatusUnauthorized,
	} {
		req := httptest.NewRequest("POST", "/mcp", nil)
		req.Host = "127.0.0.1:8931"
		req.Header.Set("Authorization", header)
		rec := httptest.NewRecorder()
		g.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("Authorization: %s: HTTP %d, want %d", header, rec.Code, want)
		}
	}
}
