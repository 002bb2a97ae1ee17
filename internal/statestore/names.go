package statestore

import (
	"crypto/sha256"
	"encoding/hex"
)

// Subject is how a caller's subject appears in the names its records and
// counts are kept under: a SHA-256 hash, so that a store shared with other
// programs says nothing of who signed in or was counted ("" stays "").
func Subject(subject string) string {
	if subject == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(subject))
	return hex.EncodeToString(sum[:16])
}
