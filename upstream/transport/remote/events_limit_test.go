package remote

import (
	"errors"
	"strings"
	"testing"
)

// An event or a JSON body over the read limit ends the read with an
// *eventTooLargeError, whether the data comes on one line or on many; the
// events before it are delivered.
func TestReadSSELimit(t *testing.T) {
	big := strings.Repeat("x", 200)
	for name, in := range map[string]string{
		"one line":   "data: ok\n\ndata: " + big + "\n\ndata: after\n\n",
		"many lines": "data: ok\n\n" + strings.Repeat("data: "+big[:50]+"\n", 4) + "\ndata: after\n\n",
	} {
		var got []string
		err := readSSE(strings.NewReader(in), 100, func(ev sseEvent) bool { got = append(got, string(ev.data)); return true })
		var tooLarge *eventTooLargeError
		if !errors.As(err, &tooLarge) || tooLarge.limit != 100 || !strings.Contains(err.Error(), "trunk.maxMessageBytes") {
			t.Errorf("%s: err = %v, want an *eventTooLargeError naming the setting", name, err)
		}
		if len(got) != 1 || got[0] != "ok" {
			t.Errorf("%s: events %q, want only the one before", name, got)
		}
	}
	if _, err := readBounded(strings.NewReader(big), 100); err == nil {
		t.Error("readBounded read a body over the limit")
	}
	if b, err := readBounded(strings.NewReader(big), 200); err != nil || len(b) != 200 {
		t.Errorf("readBounded of a body at the limit: %d bytes, %v", len(b), err)
	}
}
