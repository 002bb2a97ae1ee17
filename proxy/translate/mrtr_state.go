package translate

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"strings"
)

// stateSigner makes and checks the requestState the trunk gives a host at
// the stateless revision when it turns an upstream's server-to-client
// requests into an input_required result. The state names one parked
// exchange and one round of it, and carries an HMAC under a key that lives
// only in this process: a host cannot forge a state (no key), cannot point
// one at another exchange (the MAC covers the id), and cannot replay an old
// round (the exchange has moved on, and the round is in the MAC).
type stateSigner struct{ key [32]byte }

func newStateSigner() *stateSigner {
	s := &stateSigner{}
	_, _ = rand.Read(s.key[:]) // crypto/rand never fails on supported platforms
	return s
}

// statePrefix marks the trunk's own states, so an error can tell a host
// that a state is not one the trunk issued.
const statePrefix = "mcptrunk1."

var errBadState = errors.New("requestState is not one mcptrunk issued for this call, or its round was already answered or abandoned")

// sign returns the state for round of exchange id.
func (s *stateSigner) sign(id uint64, round uint32) string {
	var payload [12]byte
	binary.BigEndian.PutUint64(payload[:8], id)
	binary.BigEndian.PutUint32(payload[8:], round)
	mac := hmac.New(sha256.New, s.key[:])
	mac.Write(payload[:])
	enc := base64.RawURLEncoding
	return statePrefix + enc.EncodeToString(payload[:]) + "." + enc.EncodeToString(mac.Sum(nil))
}

// verify returns the exchange and round a state names, or errBadState.
func (s *stateSigner) verify(state string) (id uint64, round uint32, err error) {
	rest, ok := strings.CutPrefix(state, statePrefix)
	if !ok {
		return 0, 0, errBadState
	}
	p, m, ok := strings.Cut(rest, ".")
	if !ok {
		return 0, 0, errBadState
	}
	enc := base64.RawURLEncoding
	payload, err1 := enc.DecodeString(p)
	got, err2 := enc.DecodeString(m)
	if err1 != nil || err2 != nil || len(payload) != 12 {
		return 0, 0, errBadState
	}
	mac := hmac.New(sha256.New, s.key[:])
	mac.Write(payload)
	if !hmac.Equal(got, mac.Sum(nil)) {
		return 0, 0, errBadState
	}
	return binary.BigEndian.Uint64(payload[:8]), binary.BigEndian.Uint32(payload[8:]), nil
}
