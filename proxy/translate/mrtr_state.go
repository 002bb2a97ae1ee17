package translate

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
)

// stateSigner makes and checks the requestState the trunk gives a host at
// the stateless revision when it turns an upstream's server-to-client
// requests into an input_required result. The state names this trunk
// process, one parked exchange and one round of it, sealed (seal.go) and
// bound to the caller of the exchange: a host cannot forge a state (no
// key), cannot point one at another exchange (the MAC covers the id),
// cannot replay an old round (the exchange has moved on, and the round is
// in the MAC), and another caller cannot use it (the MAC covers the
// caller, so its retry meets the answer a forged state meets). The exchange lives in the process that
// parked it, on that process's connection to the server; replicas that
// share the key tell a state of another replica's from a forged one.
type stateSigner struct {
	key      sealKey
	instance [8]byte // this process, among replicas that share the key
}

func newStateSigner(secret []byte) *stateSigner {
	s := &stateSigner{key: newSealKey(secret, "request states")}
	_, _ = rand.Read(s.instance[:])
	return s
}

// statePrefix marks the trunk's own states, so an error can tell a host
// that a state is not one the trunk issued.
const statePrefix = "mcptrunk1."

var (
	errBadState = errors.New("requestState is not one mcptrunk issued for this call, or its round was already answered or abandoned")
	// errOtherReplica is the answer for a state another replica issued: the
	// call it continues waits there.
	errOtherReplica = errors.New("requestState was issued by another mcptrunk replica, where the call waits for this answer: " +
		"a retry that carries a requestState must reach the replica that issued it (docs/deploy.md)")
)

// sign returns the state for round of exchange id, bound to caller.
func (s *stateSigner) sign(id uint64, round uint32, caller string) string {
	var payload [20]byte
	copy(payload[:8], s.instance[:])
	binary.BigEndian.PutUint64(payload[8:16], id)
	binary.BigEndian.PutUint32(payload[16:], round)
	return s.key.seal(statePrefix, payload[:], caller)
}

// verify returns the exchange and round a state of caller's names,
// errOtherReplica for a genuine state of caller's from another process,
// or errBadState (a state of another caller's included).
func (s *stateSigner) verify(state, caller string) (id uint64, round uint32, err error) {
	payload, ok := s.key.open(statePrefix, state, caller)
	if !ok || len(payload) != 20 {
		return 0, 0, errBadState
	}
	if !bytes.Equal(payload[:8], s.instance[:]) {
		return 0, 0, errOtherReplica
	}
	return binary.BigEndian.Uint64(payload[8:16]), binary.BigEndian.Uint32(payload[16:]), nil
}
