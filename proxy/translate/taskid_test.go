package translate

import (
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"testing"
)

func TestTaskIDsRoundTrip(t *testing.T) {
	ids := NewTaskIDs(nil)
	id := ids.Issue("s1", "everything", "abc-123\x00weird")
	server, up, err := ids.Open("s1", id)
	if err != nil || server != "everything" || up != "abc-123\x00weird" {
		t.Fatalf("Open = %q, %q, %v", server, up, err)
	}
	// The session is in the MAC, not the payload (the MAC's random-looking
	// letters may spell anything, so only the payload is looked at).
	payload, _, _ := strings.Cut(strings.TrimPrefix(id, taskPrefix), ".")
	if raw, err := base64.RawURLEncoding.DecodeString(payload); err != nil || strings.Contains(string(raw), "s1") {
		t.Errorf("the id %q carries the session in its payload %q (%v)", id, raw, err)
	}
}

func TestTaskIDsRefused(t *testing.T) {
	ids := NewTaskIDs(nil)
	id := ids.Issue("s1", "everything", "abc")
	other := NewTaskIDs(nil).Issue("s1", "everything", "abc")
	p, m, _ := strings.Cut(strings.TrimPrefix(id, taskPrefix), ".")
	forged := taskPrefix + "ZXZpbABhYmM" + "." + m // "evil\x00abc" with the MAC of another payload
	cases := map[string]struct{ session, id string }{
		"other session": {"s2", id},
		"no session":    {"", id},
		"other key":     {"s1", other},
		"forged server": {"s1", forged},
		"no prefix":     {"s1", strings.TrimPrefix(id, taskPrefix)},
		"no mac":        {"s1", taskPrefix + p},
		"upstream id":   {"s1", "abc"},
		"bad base64":    {"s1", taskPrefix + "!!." + m},
		"truncated mac": {"s1", id[:len(id)-2]},
	}
	for name, c := range cases {
		if _, _, err := ids.Open(c.session, c.id); !errors.Is(err, errBadTaskID) {
			t.Errorf("%s: Open = %v, want ErrBadTaskID", name, err)
		}
	}
}

// A token's last character changed only in the bits base64 leaves unused
// is another spelling of the same bytes: refused, as any changed token is.
func TestSealedSpellingIsOne(t *testing.T) {
	ids := NewTaskIDs([]byte("k"))
	for i := range 64 {
		id := ids.Issue("", "srv", "t"+strconv.Itoa(i))
		last := strings.IndexByte(base64URLAlphabet, id[len(id)-1])
		respelt := id[:len(id)-1] + string(base64URLAlphabet[last^1])
		if _, _, err := ids.Open("", respelt); err == nil {
			t.Fatalf("%q, %q respelt, was accepted", id, respelt)
		}
	}
}

const base64URLAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
