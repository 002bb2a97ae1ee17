package httpserve

import (
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

// TestReadyzSaysDegradedAndStaysReady: a part the trunk serves without
// (a shared state store down) is named in /readyz's body, which stays
// 200: every replica shares it, and a balancer taking them all out would
// stop what still works.
func TestReadyzSaysDegradedAndStaysReady(t *testing.T) {
	var down atomic.Bool
	th := newTestHandler(t, Options{Degraded: func() string {
		if down.Load() {
			return "state store (redis) unavailable since 2026-01-02T03:04:05Z"
		}
		return ""
	}}, nil)
	readyz := strings.TrimSuffix(th.url, DefaultPath) + "/readyz"
	get := func() (int, string) {
		resp, err := th.client.Get(readyz)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get(); code != http.StatusOK || body != "ready\n" {
		t.Errorf("/readyz with nothing degraded: %d %q", code, body)
	}
	down.Store(true)
	if code, body := get(); code != http.StatusOK || body != "ready\ndegraded: state store (redis) unavailable since 2026-01-02T03:04:05Z\n" {
		t.Errorf("/readyz with the store down: %d %q", code, body)
	}
}
