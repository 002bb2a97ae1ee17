package translate

import (
	"encoding/binary"
	"errors"
)

// stateSigner makes and checks the requestState the trunk gives a host at
// the stateless revision when it turns an upstream's server-to-client
// requests into an input_required result. The state names one parked
// exchange and one round of it, sealed (seal.go) under a key that lives
// only in this process: a host cannot forge a state (no key), cannot point
// one at another exchange (the MAC covers the id), and cannot replay an old
// round (the exchange has moved on, and the round is in the MAC).
type stateSigner struct{ key sealKey }

func newStateSigner() *stateSigner { return &stateSigner{key: newSealKey()} }

// statePrefix marks the trunk's own states, so an error can tell a host
// that a state is not one the trunk issued.
const statePrefix = "mcptrunk1."

var errBadState = errors.New("requestState is not one mcptrunk issued for this call, or its round was already answered or abandoned")

// sign returns the state for round of exchange id.
func (s *stateSigner) sign(id uint64, round uint32) string {
	var payload [12]byte
	binary.BigEndian.PutUint64(payload[:8], id)
	binary.BigEndian.PutUint32(payload[8:], round)
	return s.key.seal(statePrefix, payload[:], "")
}

// verify returns the exchange and round a state names, or errBadState.
func (s *stateSigner) verify(state string) (id uint64, round uint32, err error) {
	payload, ok := s.key.open(statePrefix, state, "")
	if !ok || len(payload) != 12 {
		return 0, 0, errBadState
	}
	return binary.BigEndian.Uint64(payload[:8]), binary.BigEndian.Uint32(payload[8:]), nil
}
