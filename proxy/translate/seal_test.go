package translate

import (
	"strings"
	"testing"
)

// A sealed token opens only as it was issued: one whose last character
// differs only in bits base64 leaves unused decodes to the same bytes, and
// must still be refused.
func TestSealOneSpelling(t *testing.T) {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	k := newSealKey(nil, "test")
	token := k.seal("p.", []byte("server\x00task-1"), "session")
	if _, ok := k.open("p.", token, "session"); !ok {
		t.Fatalf("the token as issued does not open: %s", token)
	}
	last := strings.IndexByte(alphabet, token[len(token)-1])
	respelt := token[:len(token)-1] + string(alphabet[last^1]) // a MAC of 32 bytes leaves 2 bits of its last character unused
	if _, ok := k.open("p.", respelt, "session"); ok {
		t.Errorf("the token with its last character's unused bit flipped opens: %s (issued %s)", respelt, token)
	}
}
