package statestore

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
)

// KeySize is the length of a sealing key: AES-256.
const KeySize = 32

// key is one sealing key and its id, the first 8 bytes of the SHA-256 of
// the key: enough to tell keys apart, nothing about the key.
type key struct {
	id   [8]byte
	aead cipher.AEAD
}

// Keys are the sealing keys: the current one, which seals, and the
// previous one, which is still read.
type Keys struct {
	current  *key
	previous *key
}

// LoadKeys reads the key files of trunk.state (keyFile, previousKeyFile;
// previous may be ""). Errors name the field and the file, never a key.
func LoadKeys(keyFile, previousKeyFile string) (*Keys, error) {
	cur, err := readKey(keyFile, "trunk.state.keyFile")
	if err != nil {
		return nil, err
	}
	k := &Keys{current: cur}
	if previousKeyFile != "" {
		if k.previous, err = readKey(previousKeyFile, "trunk.state.previousKeyFile"); err != nil {
			return nil, err
		}
		if k.previous.id == k.current.id {
			return nil, fmt.Errorf("trunk.state.previousKeyFile: %s holds the same key as keyFile", previousKeyFile)
		}
	}
	return k, nil
}

// NewKeys makes Keys from raw keys (previous may be nil, else another
// key): for tests and callers that hold keys in memory.
func NewKeys(current, previous []byte) (*Keys, error) {
	cur, err := newKey(current)
	if err != nil {
		return nil, err
	}
	k := &Keys{current: cur}
	if previous != nil {
		if k.previous, err = newKey(previous); err != nil {
			return nil, err
		}
		if k.previous.id == k.current.id {
			return nil, errors.New("the previous sealing key is the current one")
		}
	}
	return k, nil
}

// ID is the current key's id as sealed records name it (hex).
func (k *Keys) ID() string { return hex.EncodeToString(k.current.id[:]) }

// readKey reads a key file: 64 hex digits (openssl rand -hex 32), the
// base64 of 32 bytes, or the 32 bytes themselves.
func readKey(path, field string) (*key, error) {
	if path == "" {
		return nil, fmt.Errorf("%s: is required to seal tokens", field)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	b, err := decodeKey(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", field, path, err)
	}
	return newKey(b)
}

func decodeKey(raw []byte) ([]byte, error) {
	if len(raw) == KeySize {
		return raw, nil
	}
	s := strings.TrimSpace(string(raw))
	if b, err := hex.DecodeString(s); err == nil {
		return checkLen(b)
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return checkLen(b)
		}
	}
	return nil, fmt.Errorf("holds neither hex, base64 nor %d raw bytes (make one with: openssl rand -hex 32)", KeySize)
}

func checkLen(b []byte) ([]byte, error) {
	if len(b) != KeySize {
		return nil, fmt.Errorf("holds a key of %d bytes, want %d (make one with: openssl rand -hex 32)", len(b), KeySize)
	}
	return b, nil
}

func newKey(b []byte) (*key, error) {
	if len(b) != KeySize {
		return nil, fmt.Errorf("a sealing key must be %d bytes, got %d", KeySize, len(b))
	}
	block, err := aes.NewCipher(b)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	k := &key{aead: aead}
	sum := sha256.Sum256(b)
	copy(k.id[:], sum[:8])
	return k, nil
}

// errNoKey says a record is sealed under a key the store was not given.
var errNoKey = errors.New("sealed under a key this trunk does not have (neither trunk.state.keyFile nor previousKeyFile)")

// seal encrypts value under the current key with ad as additional data:
// key id, nonce, ciphertext.
func (k *Keys) seal(value, ad []byte) []byte {
	c := k.current
	out := make([]byte, 0, len(c.id)+c.aead.NonceSize()+len(value)+c.aead.Overhead())
	out = append(out, c.id[:]...)
	nonce := make([]byte, c.aead.NonceSize())
	_, _ = rand.Read(nonce) // crypto/rand.Read never fails
	out = append(out, nonce...)
	return c.aead.Seal(out, nonce, value, ad)
}

// open decrypts what seal made; stale reports that it was sealed under
// the previous key.
func (k *Keys) open(sealed, ad []byte) (value []byte, stale bool, err error) {
	if len(sealed) < 8 {
		return nil, false, errors.New("a sealed record too short to name its key")
	}
	var c *key
	switch id := sealed[:8]; {
	case k == nil:
	case string(id) == string(k.current.id[:]):
		c = k.current
	case k.previous != nil && string(id) == string(k.previous.id[:]):
		c, stale = k.previous, true
	}
	if c == nil {
		return nil, false, fmt.Errorf("%w: key id %s", errNoKey, hex.EncodeToString(sealed[:8]))
	}
	rest := sealed[8:]
	if len(rest) < c.aead.NonceSize() {
		return nil, false, errors.New("a sealed record too short for its nonce")
	}
	value, err = c.aead.Open(nil, rest[:c.aead.NonceSize()], rest[c.aead.NonceSize():], ad)
	if err != nil {
		return nil, false, errors.New("a sealed record fails its authentication: altered, or moved from another name")
	}
	return value, stale, nil
}
