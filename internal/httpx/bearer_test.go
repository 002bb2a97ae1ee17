package httpx

import (
	"net/http"
	"testing"
)

func TestBearerToken(t *testing.T) {
	for _, tc := range []struct {
		header, want string
		ok           bool
	}{
		{"Bearer abc", "abc", true},
		{"bearer abc", "abc", true},
		{"BEARER abc", "abc", true},
		{"Bearer   abc ", "abc", true},
		{"Basic abc", "", false},
		{"Bearerabc", "", false},
		{"Bearer ", "", false},
		{"", "", false},
	} {
		h := http.Header{}
		if tc.header != "" {
			h.Set("Authorization", tc.header)
		}
		if got, ok := BearerToken(h); got != tc.want || ok != tc.ok {
			t.Errorf("BearerToken(%q) = %q, %v; want %q, %v", tc.header, got, ok, tc.want, tc.ok)
		}
	}
}
