package httpserve

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
)

// LoadOrCreateToken reads the listener's token file (trunk.http.tokenFile),
// or creates it (0600) with a new random token, printed once on stderr so
// the user can give it to hosts.
func LoadOrCreateToken(path string, logger *slog.Logger) (string, error) {
	data, err := os.ReadFile(path)
	if err == nil {
		token := strings.TrimSpace(string(data))
		if token == "" {
			return "", fmt.Errorf("token file %s is empty", path)
		}
		return token, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("reading the token file: %w", err)
	}
	var b [32]byte
	_, _ = rand.Read(b[:])
	token := hex.EncodeToString(b[:])
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("creating the token file: %w", err)
	}
	_, werr := f.WriteString(token + "\n")
	if err := errors.Join(werr, f.Close()); err != nil {
		return "", fmt.Errorf("writing the token file: %w", err)
	}
	logger.Info("created a bearer token for the HTTP listener; hosts send it as Authorization: Bearer <token>", "file", path)
	if st, err := os.Stderr.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
		// Printed once, to a person at a terminal; never into a log file.
		fmt.Fprintf(os.Stderr, "mcptrunk: the new token (also in %s): %s\n", path, token)
	}
	return token, nil
}

// MinSigningKey is the shortest secret LoadSigningKey accepts: 32 bytes,
// as many as the HMAC-SHA256 key derived from it.
const MinSigningKey = 32

// LoadSigningKey reads the secret of trunk.http.signingKeyFile: the file's
// content without the spaces and newlines around it. A missing, empty or
// short file is an error naming the file, never its content.
func LoadSigningKey(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("trunk.http.signingKeyFile: %w", err)
	}
	key := []byte(strings.TrimSpace(string(data)))
	if len(key) < MinSigningKey {
		return nil, fmt.Errorf("trunk.http.signingKeyFile %s holds %d bytes, fewer than %d: make one with `openssl rand -hex 32 > %s`", path, len(key), MinSigningKey, path)
	}
	return key, nil
}
