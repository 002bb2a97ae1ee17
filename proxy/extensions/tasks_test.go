package extensions

import (
	"encoding/json"
	"testing"
)

func TestTasksMerged(t *testing.T) {
	cases := []struct {
		name    string
		servers []string
		want    string
	}{
		{"none", []string{`{"tools":{}}`, `{}`}, ``},
		{"bare", []string{`{"tasks":{}}`}, `{}`},
		{"union", []string{
			`{"tasks":{"list":{}}}`,
			`{"tools":{}}`,
			`{"tasks":{"cancel":{},"requests":{"tools":{"call":{}}}}}`,
		}, `{"cancel":{},"list":{},"requests":{"tools":{"call":{}}}}`},
		{"the 2026-07-28 extension", []string{`{"extensions":{"io.modelcontextprotocol/tasks":{}}}`}, `{"cancel":{},"list":{},"requests":{"tools":{"call":{}}}}`},
		{"other requests only", []string{`{"tasks":{"requests":{"sampling":{"createMessage":{}}}}}`}, `{}`},
		{"not an object", []string{`{"tasks":true}`}, ``},
	}
	for _, c := range cases {
		raw := make([]json.RawMessage, len(c.servers))
		for i, s := range c.servers {
			raw[i] = json.RawMessage(s)
		}
		if got := string(Tasks(raw)); got != c.want {
			t.Errorf("%s: Tasks = %s, want %s", c.name, got, c.want)
		}
	}
}
