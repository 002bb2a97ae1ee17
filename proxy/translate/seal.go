package translate

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"strings"
)

// sealKey makes and opens the tokens the trunk hands a host and must later
// trust again (a requestState, a task id): prefix, the payload in base64url,
// and an HMAC-SHA256 under a key that lives only in this process, or that
// the replicas of one deployment share (trunk.http.signingKeyFile). The MAC
// covers the prefix (a token of one kind is never taken for another), what
// the token is bound to (not carried in it: a session) and the payload.
type sealKey struct{ key [32]byte }

// newSealKey returns the key for purpose: derived from secret, so that
// every trunk given the same secret makes and opens the same tokens, or
// random when secret is empty. Each purpose gets a key of its own.
func newSealKey(secret []byte, purpose string) sealKey {
	var k sealKey
	if len(secret) == 0 {
		_, _ = rand.Read(k.key[:]) // crypto/rand never fails on supported platforms
		return k
	}
	h := hmac.New(sha256.New, secret)
	h.Write([]byte("mcptrunk seal key: " + purpose))
	copy(k.key[:], h.Sum(nil))
	return k
}

// seal returns the token for payload, bound to bound.
func (k *sealKey) seal(prefix string, payload []byte, bound string) string {
	enc := base64.RawURLEncoding
	return prefix + enc.EncodeToString(payload) + "." + enc.EncodeToString(k.mac(prefix, payload, bound))
}

// open returns the payload of a token sealed with prefix and bound to
// bound; ok is false for anything else.
func (k *sealKey) open(prefix, token, bound string) (payload []byte, ok bool) {
	rest, ok := strings.CutPrefix(token, prefix)
	if !ok {
		return nil, false
	}
	p, m, ok := strings.Cut(rest, ".")
	if !ok {
		return nil, false
	}
	// Strict: the unused bits of the last character must be zero, so one
	// token has one spelling (else a changed last character may decode
	// alike and pass for the token).
	enc := base64.RawURLEncoding.Strict()
	payload, err1 := enc.DecodeString(p)
	got, err2 := enc.DecodeString(m)
	if err1 != nil || err2 != nil || !hmac.Equal(got, k.mac(prefix, payload, bound)) {
		return nil, false
	}
	return payload, true
}

// mac signs the three parts, each length-prefixed so that no other split of
// the same bytes signs alike.
func (k *sealKey) mac(prefix string, payload []byte, bound string) []byte {
	h := hmac.New(sha256.New, k.key[:])
	for _, part := range [][]byte{[]byte(prefix), []byte(bound), payload} {
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(part)))
		h.Write(n[:])
		h.Write(part)
	}
	return h.Sum(nil)
}
