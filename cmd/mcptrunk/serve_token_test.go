//go:build !windows

package main

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A short token, or a token file others can read, is refused for a
// listener the network can reach, and warned about on loopback; the message
// says how to fix it and never shows the token.
func TestCheckToken(t *testing.T) {
	dir := t.TempDir()
	good := strings.Repeat("a1", 32)
	for _, tc := range []struct {
		name, token string
		mode        os.FileMode
		problem     string // "" when the token is fine
	}{
		{"good", good, 0o600, ""},
		{"short", "k9Qz", 0o600, "shorter than 32"},
		{"readable", good, 0o644, "readable by other users"},
		{"group readable", good, 0o640, "readable by other users"},
	} {
		path := filepath.Join(dir, tc.name)
		if err := os.WriteFile(path, []byte(tc.token+"\n"), tc.mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, tc.mode); err != nil { // past the umask
			t.Fatal(err)
		}
		var logs bytes.Buffer
		logger := slog.New(slog.NewTextHandler(&logs, nil))
		err := checkToken(path, tc.token, false, logger)
		switch {
		case tc.problem == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.problem != "" && (err == nil || !strings.Contains(err.Error(), tc.problem) || !strings.Contains(err.Error(), "openssl rand -hex 32") || !strings.Contains(err.Error(), "chmod 600")):
			t.Errorf("%s: non-loopback: %v; want a refusal saying %q and how to fix it", tc.name, err, tc.problem)
		}
		if err := checkToken(path, tc.token, true, logger); err != nil {
			t.Errorf("%s: refused on loopback: %v", tc.name, err)
		}
		if tc.problem != "" && !strings.Contains(logs.String(), tc.problem) {
			t.Errorf("%s: no warning on loopback:\n%s", tc.name, logs.String())
		}
		if strings.Contains(logs.String(), tc.token) || (err != nil && strings.Contains(err.Error(), tc.token)) {
			t.Errorf("%s: the token shows in a message", tc.name)
		}
	}
}

// serve --http on a non-loopback address with a one-character token in a
// world-readable file does not start.
func TestHTTPNonLoopbackWeakToken(t *testing.T) {
	t.Parallel()
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, map[string]server{"notes": notesServer()}, nil)
	_, stderr, code := runCLI(t, 30*time.Second, "serve", "--http", "0.0.0.0:0", "--token-file", tokenFile, "--config", cfg)
	if code == 0 || !strings.Contains(stderr, "shorter than 32") || !strings.Contains(stderr, "openssl rand -hex 32") {
		t.Fatalf("serve --http 0.0.0.0:0 with a weak token: exit %d, stderr:\n%s", code, stderr)
	}
}
