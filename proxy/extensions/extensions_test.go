package extensions

import (
	"encoding/json"
	"testing"
)

func TestDeclared(t *testing.T) {
	for _, tc := range []struct {
		member string
		want   int
	}{
		{``, 0}, {`null`, 0}, {`[]`, 0}, {`"x"`, 0}, {`{}`, 0},
		{`{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}`, 1},
		{` {"a":{},"b":true}`, 2},
	} {
		if got := declared(json.RawMessage(tc.member)); len(got) != tc.want {
			t.Errorf("Declared(%s) = %v, want %d extensions", tc.member, got, tc.want)
		}
	}
	caps := map[string]json.RawMessage{"roots": json.RawMessage(`{}`), Key: json.RawMessage(`{"x":{"v":1}}`)}
	if got := Of(caps); string(got["x"]) != `{"v":1}` {
		t.Errorf("Of = %v", got)
	}
	if got := OfRaw(json.RawMessage(`{"tools":{},"extensions":{"x":{"v":2}}}`)); string(got["x"]) != `{"v":2}` {
		t.Errorf("OfRaw = %v", got)
	}
	if got := OfRaw(json.RawMessage(`not json`)); got != nil {
		t.Errorf("OfRaw of garbage = %v", got)
	}
}

// The trunk declares every extension a ready server declares, with the
// first server's settings unless the extension merges them, and nothing
// when no server declares any.
func TestUnion(t *testing.T) {
	ext := func(s string) map[string]json.RawMessage { return declared(json.RawMessage(s)) }
	for _, tc := range []struct {
		name    string
		servers []map[string]json.RawMessage
		want    string
	}{
		{"none", nil, ``},
		{"no server declares any", []map[string]json.RawMessage{nil, ext(`{}`)}, ``},
		{"one", []map[string]json.RawMessage{ext(`{"x":{"v":1}}`)}, `{"x":{"v":1}}`},
		{"union, first settings win", []map[string]json.RawMessage{ext(`{"x":{"v":1}}`), nil, ext(`{"y":{},"x":{"v":2}}`)}, `{"x":{"v":1},"y":{}}`},
	} {
		if got := string(Union(tc.servers)); got != tc.want {
			t.Errorf("%s: Union = %s, want %s", tc.name, got, tc.want)
		}
	}
	merges["m"] = func(s []json.RawMessage) json.RawMessage {
		b, _ := json.Marshal(len(s))
		return b
	}
	defer delete(merges, "m")
	merges["empty"] = func([]json.RawMessage) json.RawMessage { return nil }
	defer delete(merges, "empty")
	got := string(Union([]map[string]json.RawMessage{ext(`{"m":{"a":1},"empty":{}}`), ext(`{"m":{"b":2}}`)}))
	if want := `{"empty":{},"m":2}`; got != want {
		t.Errorf("merged: Union = %s, want %s", got, want)
	}
}

// An extension the trunk withholds is left out both ways, and a member
// without one passes byte for byte. None is withheld today; the test
// withholds one of its own.
func TestWithheld(t *testing.T) {
	const held = "example.com/held"
	withheld[held] = "for the test"
	defer delete(withheld, held)
	if carried(held) || !carried("io.modelcontextprotocol/ui") || !carried(TasksExtension) {
		t.Errorf("Carried: held %v, ui %v, tasks %v", carried(held), carried("io.modelcontextprotocol/ui"), carried(TasksExtension))
	}
	got := string(Union([]map[string]json.RawMessage{declared(json.RawMessage(`{"` + held + `":{},"x":{}}`))}))
	if got != `{"x":{}}` {
		t.Errorf("Union = %s, want the withheld extension left out", got)
	}
	for member, want := range map[string]string{
		`{ "a" : {"v": 1} }`:              `{ "a" : {"v": 1} }`,
		`{"a":{},"` + held + `":{"x":1}}`: `{"a":{}}`,
		`{"` + held + `":{}}`:             `{}`,
		`"not an object"`:                 `"not an object"`,
	} {
		if got := string(Forwarded(json.RawMessage(member))); got != want {
			t.Errorf("Forwarded(%s) = %s, want %s", member, got, want)
		}
	}
}

// The skills extension is declared with directoryRead when any server
// serves it.
func TestMergeSkills(t *testing.T) {
	for _, tc := range []struct {
		servers []map[string]json.RawMessage
		want    string
	}{
		{[]map[string]json.RawMessage{{SkillsExtension: json.RawMessage(`{}`)}, {SkillsExtension: json.RawMessage(`{"directoryRead":true}`)}}, `{"` + SkillsExtension + `":{"directoryRead":true}}`},
		{[]map[string]json.RawMessage{{SkillsExtension: json.RawMessage(`{"directoryRead":false}`)}}, `{"` + SkillsExtension + `":{}}`},
	} {
		if got := string(Union(tc.servers)); got != tc.want {
			t.Errorf("Union = %s, want %s", got, tc.want)
		}
	}
}
