package textview

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/upstream"
)

// TestStderrReason: of what a server wrote to stderr, the line that says
// why it failed, in the shapes runtimes write it, never a warning before.
func TestStderrReason(t *testing.T) {
	for _, c := range []struct{ name, tail, want string }{
		{"warning then error", "Warning: first line\nError: the real reason", "Error: the real reason"},
		{"node", "/srv/index.js:3\n    throw new Error(\"boom\");\n    ^\n\nError: boom\n    at Object.<anonymous> (/srv/index.js:3:11)\n\nNode.js v20.1.0",
			"Error: boom"},
		{"python", "WARNING: slow start\nTraceback (most recent call last):\n  File \"/srv/s.py\", line 1, in <module>\n    import missing\nModuleNotFoundError: No module named 'missing'",
			"ModuleNotFoundError: No module named 'missing'"},
		{"go", "panic: open /data: permission denied\n\ngoroutine 1 [running]:\nmain.main()\n\t/src/main.go:9 +0x1d", "panic: open /data: permission denied"},
		{"trouble words", "Starting server v1.2\nGITHUB_TOKEN not set\nbye", "GITHUB_TOKEN not set"},
		{"warnings only", "warn: deprecated flag\nWARNING: config is old", "WARNING: config is old"},
		{"plain", "starting\nlistening on stdio\nshutting down", "shutting down"},
	} {
		if got := StderrReason(c.tail); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestStatusTableShowsStderrReason: the table's error column shows the
// failure a server wrote to stderr, not the first line of its stderr.
func TestStatusTableShowsStderrReason(t *testing.T) {
	var out bytes.Buffer
	StatusTable(&out, []upstream.Status{{Server: "fs", State: upstream.StateFailed,
		Error: `server "fs": initialize: process exit status 1; last stderr: Warning: first line` + "\nError: Access denied - /nope"}})
	if !strings.Contains(out.String(), `server "fs": initialize: process exit status 1; stderr: Error: Access denied - /nope`) {
		t.Errorf("the table:\n%s", out.String())
	}
	if strings.Contains(out.String(), "Warning") {
		t.Errorf("the table shows the warning:\n%s", out.String())
	}
}
