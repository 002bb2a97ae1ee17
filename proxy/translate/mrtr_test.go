package translate

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestStateSignerRefusesForgeries(t *testing.T) {
	s := newStateSigner(nil)
	const alice = "subject:alice"
	state := s.sign(42, 3, alice)
	id, round, err := s.verify(state, alice)
	if err != nil || id != 42 || round != 3 {
		t.Fatalf("verify(sign(42, 3)) = %d, %d, %v", id, round, err)
	}
	other := newStateSigner(nil).sign(42, 3, alice) // another trunk's key
	payload, mac, _ := strings.Cut(strings.TrimPrefix(state, statePrefix), ".")
	otherPayload, _, _ := strings.Cut(strings.TrimPrefix(s.sign(43, 3, alice), statePrefix), ".")
	flipped := []byte(mac)
	flipped[0] ^= 1
	for name, forged := range map[string]string{
		"another key":           other,
		"another exchange's id": statePrefix + otherPayload + "." + mac,
		"changed mac":           statePrefix + payload + "." + string(flipped),
		"no prefix":             strings.TrimPrefix(state, statePrefix),
		"truncated":             state[:len(state)-4],
		"empty":                 "",
		"upstream-like":         "round=1",
	} {
		if _, _, err := s.verify(forged, alice); err != errBadState {
			t.Errorf("%s: verify = %v, want errBadState", name, err)
		}
	}
	// Another caller holding alice's state: the answer a forgery gets.
	for _, caller := range []string{"subject:bob", "", "a-session-id"} {
		if _, _, err := s.verify(state, caller); err != errBadState {
			t.Errorf("alice's state verified as %q's: %v, want errBadState", caller, err)
		}
	}
}

func TestNeedsInput(t *testing.T) {
	ir, ok := needsInput(json.RawMessage(`{"content":null,"requestState":"round=1","resultType":"input_required","inputRequests":{"step1":{"method":"elicitation/create","params":{"message":"m"}}}}`))
	if !ok || len(ir.InputRequests) != 1 || ir.InputRequests["step1"].Method != "elicitation/create" || ir.RequestState == nil || *ir.RequestState != "round=1" {
		t.Fatalf("needsInput = %+v, %v", ir, ok)
	}
	for _, res := range []string{`{"content":[]}`, `{"resultType":"complete","content":[]}`, `{"content":[{"type":"text","text":"resultType input_required"}]}`} {
		if _, ok := needsInput(json.RawMessage(res)); ok {
			t.Errorf("needsInput(%s) = true", res)
		}
	}
}

func TestRetryParams(t *testing.T) {
	state := "s1"
	got, err := retryParams(json.RawMessage(`{"name":"t","arguments":{"a":1},"requestState":"old","inputResponses":{"x":{}}}`),
		map[string]json.RawMessage{"k": json.RawMessage(`{"action":"accept"}`)}, &state)
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Name           string                     `json:"name"`
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
		RequestState   string                     `json:"requestState"`
	}
	if err := json.Unmarshal(got, &p); err != nil {
		t.Fatal(err)
	}
	if p.Name != "t" || p.RequestState != "s1" || len(p.InputResponses) != 1 || string(p.InputResponses["k"]) != `{"action":"accept"}` {
		t.Errorf("retryParams = %s", got)
	}
	got, err = retryParams(json.RawMessage(`{"name":"t","requestState":"old"}`), map[string]json.RawMessage{}, nil)
	if err != nil || strings.Contains(string(got), "requestState") {
		t.Errorf("no state from the server: %s, %v", got, err)
	}
}

// Replicas that share a signing key: each opens the others' task ids, and
// tells another replica's request state (whose call waits there) from a
// forged one; a replica with another key refuses both as forged.
func TestSharedSigningKey(t *testing.T) {
	secret := []byte("a secret the replicas of one deployment share")
	a, b := NewTaskIDs(secret), NewTaskIDs(secret)
	id := a.Issue("", "remote", "t-1")
	if server, up, err := b.Open("", id); err != nil || server != "remote" || up != "t-1" {
		t.Errorf("a replica with the same key opens %q as %q %q %v", id, server, up, err)
	}
	if _, _, err := NewTaskIDs([]byte("another deployment's secret")).Open("", id); err != errBadTaskID {
		t.Errorf("a replica with another key: %v, want ErrBadTaskID", err)
	}
	if _, _, err := NewTaskIDs(nil).Open("", id); err != errBadTaskID {
		t.Errorf("a trunk with a key of its own: %v, want ErrBadTaskID", err)
	}

	sa, sb := newStateSigner(secret), newStateSigner(secret)
	state := sa.sign(7, 1, "")
	if id, round, err := sa.verify(state, ""); err != nil || id != 7 || round != 1 {
		t.Errorf("the issuing replica verifies %d %d %v", id, round, err)
	}
	if _, _, err := sb.verify(state, ""); err != errOtherReplica {
		t.Errorf("another replica with the key: %v, want errOtherReplica", err)
	}
	if _, _, err := newStateSigner([]byte("another deployment's secret")).verify(state, ""); err != errBadState {
		t.Errorf("a replica with another key: %v, want errBadState", err)
	}
}
