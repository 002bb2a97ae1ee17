package main

import (
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strings"
)

// minTokenBytes is the shortest bearer token serve --http takes on a
// listener others can reach: 32 bytes, as the 64 hex digits of the token it
// makes itself carry 256 bits.
const minTokenBytes = 32

// tokenFix says how to make a good token file.
const tokenFix = "make one with: openssl rand -hex 32 > FILE; chmod 600 FILE (or remove the file and mcptrunk creates one)"

// checkToken refuses a weak token for a listener that is not loopback: one
// shorter than minTokenBytes, or kept in a file that other users can read
// (they could then use every server). On loopback only this machine's users
// can connect at all, so it warns instead. The message names the file and
// how to fix it, never the token.
func checkToken(path, token string, loopback bool, logger *slog.Logger) error {
	var problems []string
	if len(token) < minTokenBytes {
		problems = append(problems, fmt.Sprintf("the token is %d bytes, shorter than %d", len(token), minTokenBytes))
	}
	if runtime.GOOS != "windows" { // Windows has no such mode bits: ACLs guard the file
		if st, err := os.Stat(path); err == nil && st.Mode().Perm()&0o077 != 0 {
			problems = append(problems, fmt.Sprintf("the file is readable by other users (mode %#o)", st.Mode().Perm()))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	what := strings.Join(problems, " and ")
	if !loopback {
		return fmt.Errorf("--token-file %s: %s, which anyone who can reach a non-loopback listener could guess or read; %s", path, what, tokenFix)
	}
	logger.Warn("weak bearer token for the HTTP listener: "+what+"; "+tokenFix, "file", path)
	return nil
}
