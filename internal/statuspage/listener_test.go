package statuspage

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

// A listener binds only loopback addresses, serves behind Guard (token and
// all), and Close ends it.
func TestListener(t *testing.T) {
	logger := slog.New(slog.DiscardHandler)
	for _, addr := range []string{"0.0.0.0:0", "example.com:80", "no-port"} {
		if l, err := Listen("--listen", addr, logger); err == nil {
			l.Close(context.Background())
			t.Errorf("Listen(%q) bound an address off this machine", addr)
		} else if !strings.Contains(err.Error(), "--listen") {
			t.Errorf("Listen(%q): %v, want the error to name the flag", addr, err)
		}
	}
	l, err := Listen("--listen", "127.0.0.1:0", logger)
	if err != nil {
		t.Fatal(err)
	}
	l.Serve(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "page") }), "secret")
	get := func(path string) int {
		resp, err := http.Get("http://" + l.Addr() + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get("/"); code != http.StatusUnauthorized {
		t.Errorf("without the token: %d, want 401", code)
	}
	if code := get("/?token=secret"); code != http.StatusOK {
		t.Errorf("with the token: %d, want 200", code)
	}
	if err := l.Close(context.Background()); err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, err := http.Get("http://" + l.Addr() + "/"); err == nil {
		t.Error("the listener still answers after Close")
	}
}
