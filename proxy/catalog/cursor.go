package catalog

import (
	"encoding/base64"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
)

// Cursors are opaque to the host: the exported name of the last item sent,
// base64-encoded.
func encodeCursor(after string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(after))
}

func decodeCursor(cursor string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return "", jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid cursor %q", cursor)
	}
	return string(b), nil
}
