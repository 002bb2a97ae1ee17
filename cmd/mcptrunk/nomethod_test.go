//go:build !windows

package main

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A request whose method is "" or null is answered on every transport:
// -32600 with its id on stdio, and over HTTP a 400 with -32600 rather than
// the 202 of a response (which left the host waiting for an answer).
func TestRequestWithoutMethodAnswered(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 60*time.Second)
	cfg := writeConfig(t, map[string]server{"notes": notesServer()}, nil)

	c := startRawTrunk(t, ctx, cfg)
	line, err := c.callLine(ctx, "", `{}`)
	if err != nil || !bytes.Contains(line, []byte(`"code":-32600`)) || !bytes.Contains(line, []byte("method must be a non-empty string")) {
		t.Errorf("stdio: a request with method \"\" was answered %q, %v; want -32600 with its id", line, err)
	}

	trunk := startHTTPTrunk(t, ctx, cfg)
	for _, body := range []string{`{"jsonrpc":"2.0","id":1,"method":""}`, `{"jsonrpc":"2.0","id":"x","method":null}`} {
		r, err := postMCP(ctx, trunk.url, body, nil)
		if err != nil || r.status != http.StatusBadRequest || !strings.Contains(strings.Join(r.messages, "\n"), "-32600") {
			t.Errorf("HTTP: %s was answered %d %q, %v; want 400 with -32600", body, r.status, r.messages, err)
		}
	}
}
