package translate

import (
	"encoding/json"
	"testing"
)

// initialize agrees on the host's revision when the trunk knows it, else
// on the newest; its capabilities and client are read; bad params are
// -32602.
func TestReadInitialize(t *testing.T) {
	for asked, want := range map[string]string{"2025-06-18": "2025-06-18", "2099-01-01": versions2025[0], "": versions2025[0]} {
		got, err := ReadInitialize(json.RawMessage(`{"protocolVersion":"` + asked + `","capabilities":{"sampling":{}},"clientInfo":{"name":"h","version":"2"}}`))
		if err != nil || got.Version != want || !got.Can("sampling") || got.ClientName != "h" || got.ClientVersion != "2" {
			t.Errorf("asked %q: %+v, %v; want revision %s", asked, got, err, want)
		}
	}
	if _, err := ReadInitialize(json.RawMessage(`[1]`)); err == nil {
		t.Error("params that are not an object were accepted")
	}
}
