package proxy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/config"
)

// TestStatusCountsSessions: the host on stdio and a session of the HTTP
// downstream are sessions; a stateless request over HTTP is not.
func TestStatusCountsSessions(t *testing.T) {
	cfg, err := config.Parse(strings.NewReader(`{"mcpServers":{}}`), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	tr := New(cfg, nil)
	if n := tr.Status().Sessions; n != 0 {
		t.Fatalf("%d sessions before any attached", n)
	}
	for i, opts := range []*SessionOptions{nil, {ID: "c0ffee"}, {PerRequest: true}} {
		h := attachPipes(t, tr, opts)
		h.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
		h.next(fmt.Sprint("the ping of session ", i))
	}
	if n := tr.Status().Sessions; n != 2 {
		t.Errorf("%d sessions, want 2 (stdio and the HTTP session)", n)
	}
}
