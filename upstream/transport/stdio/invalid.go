package stdio

import (
	"sort"
	"strings"

	"github.com/mcptrunk/mcptrunk/internal/logkey"
)

// FirstInvalidLine returns the first line the server wrote to stdout that
// was not JSON-RPC, fit for an error message (clipped, control characters
// blanked, the values of the server's environment blanked out by the
// Conn's Redact, as they may be credentials), or "" when there was none. A
// server that prints a banner or its own logs to stdout is the usual
// reason it never answers.
func (t *Transport) FirstInvalidLine() string {
	line := t.conn.FirstInvalidLine()
	if line == "" {
		return ""
	}
	return logkey.Clip(line)
}

// redact blanks the secrets out of text the server wrote.
func redact(secrets []string) func(string) string {
	return func(text string) string {
		for _, s := range secrets {
			text = strings.ReplaceAll(text, s, "[redacted]")
		}
		return text
	}
}

// envSecrets returns the values of env worth blanking out of what the
// server writes: those long enough to be a credential (short ones, such
// as "1" or "true", would blank unrelated text), longest first so that a
// value containing another is blanked whole.
func envSecrets(env map[string]string) []string {
	var out []string
	for _, v := range env {
		if len(v) >= 6 {
			out = append(out, v)
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}
