package main

import (
	"strings"
	"testing"
	"time"
)

// TestServeHint: a bare mcptrunk run in a terminal says what it is and
// how to try it; run by a host (stdin a pipe) or serving only HTTP, it
// says nothing.
func TestServeHint(t *testing.T) {
	hint := serveHint(true, true)
	for _, want := range []string{"MCP server", "waiting for a host", "stdin", "mcptrunk list", "mcptrunk call"} {
		if !strings.Contains(hint, want) {
			t.Errorf("the hint does not say %q:\n%s", want, hint)
		}
	}
	if serveHint(false, true) != "" || serveHint(true, false) != "" {
		t.Error("a hint with stdin not a terminal, or not served")
	}
	// The process as a host runs it: stdin a pipe, so no hint.
	cfg := writeConfig(t, map[string]server{}, nil)
	if _, errOut, _ := runCLI(t, 30*time.Second, "--config", cfg); strings.Contains(errOut, "waiting for a host") {
		t.Errorf("mcptrunk with stdin a pipe printed the hint:\n%s", errOut)
	}
}
