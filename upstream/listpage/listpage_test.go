package listpage

import (
	"encoding/json"
	"strings"
	"testing"
)

// A page keeps its items byte for byte and reads its cursor; a missing or
// null array or cursor is an empty page or the last one; a field of the
// wrong type is an error naming the request and the field.
func TestParse(t *testing.T) {
	p, err := Parse("tools/list", "tools", json.RawMessage(`{"tools":[{"name":"a" },{"name":"b"}],"nextCursor":"c2"}`))
	if err != nil || len(p.Items) != 2 || string(p.Items[0]) != `{"name":"a" }` || p.NextCursor != "c2" {
		t.Fatalf("Parse: %+v, %v", p, err)
	}
	for _, raw := range []string{`{}`, `{"tools":null,"nextCursor":null}`} {
		if p, err := Parse("tools/list", "tools", json.RawMessage(raw)); err != nil || len(p.Items) != 0 || p.NextCursor != "" {
			t.Errorf("Parse(%s): %+v, %v; want an empty last page", raw, p, err)
		}
	}
	for raw, want := range map[string]string{
		`[]`:                 "decoding prompts/list result",
		`{"prompts":{}}`:     `field "prompts"`,
		`{"nextCursor":7}`:   `field "nextCursor"`,
		`{"prompts":[],"x":`: "decoding prompts/list result",
	} {
		if _, err := Parse("prompts/list", "prompts", json.RawMessage(raw)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%s): %v, want an error with %q", raw, err, want)
		}
	}
}

// An item's key is its identifying field, a non-empty string.
func TestKey(t *testing.T) {
	if k, err := Key("uri", json.RawMessage(`{"uri":"file:///a","name":"n"}`)); k != "file:///a" || err != nil {
		t.Errorf("Key: %q, %v", k, err)
	}
	for _, raw := range []string{`{"name":"n"}`, `{"uri":""}`, `{"uri":3}`, `[]`} {
		if k, err := Key("uri", json.RawMessage(raw)); err == nil {
			t.Errorf("Key(%s) = %q, want an error", raw, k)
		}
	}
}
