package main

import (
	"strings"
	"testing"
	"time"
)

// TestServeHint: a bare mcptrunk run by a host (stdin a pipe) says
// nothing of how to try it (textview.ServeHint: what it says in a
// terminal).
func TestServeHint(t *testing.T) {
	cfg := writeConfig(t, map[string]server{}, nil)
	if _, errOut, _ := runCLI(t, 30*time.Second, "--config", cfg); strings.Contains(errOut, "waiting for a host") {
		t.Errorf("mcptrunk with stdin a pipe printed the hint:\n%s", errOut)
	}
}
