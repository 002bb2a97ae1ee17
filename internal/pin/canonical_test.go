package pin

import (
	"encoding/json"
	"strings"
	"testing"
)

// The canonical form keeps only what is pinned, sorts keys at every depth
// and keeps numbers as written, so that the same definition always hashes
// the same and an irrelevant change (icons, _meta, key order, spacing)
// is not drift, while any change the model would read is.
func TestCanonical(t *testing.T) {
	base := `{"name":"search","description":"Find notes.","inputSchema":{"type":"object","properties":{"q":{"type":"string","maxLength":100}}},"annotations":{"readOnlyHint":true}}`
	canon, sum, err := Canonical(Tools, json.RawMessage(base))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"annotations":{"readOnlyHint":true},"description":"Find notes.","inputSchema":{"properties":{"q":{"maxLength":100,"type":"string"}},"type":"object"},"name":"search"}`; string(canon) != want {
		t.Errorf("canonical form\n got %s\nwant %s", canon, want)
	}
	same := []string{
		`{"description":"Find notes.","name":"search","annotations":{"readOnlyHint":true},"inputSchema":{"properties":{"q":{"maxLength":100,"type":"string"}},"type":"object"}}`,
		`{ "name" : "search", "description": "Find notes.", "inputSchema": {"type": "object", "properties": {"q": {"type": "string", "maxLength": 100}}}, "annotations": {"readOnlyHint": true}, "icons": [{"src": "x.png"}], "_meta": {"a": 1} }`,
	}
	for _, s := range same {
		if _, got, err := Canonical(Tools, json.RawMessage(s)); err != nil || got != sum {
			t.Errorf("a definition that differs only in order, spacing, icons or _meta hashed differently: %s (%v)", s, err)
		}
	}
	different := map[string]string{
		"description":   strings.Replace(base, "Find notes.", "Find notes!", 1),
		"schema":        strings.Replace(base, `"maxLength":100`, `"maxLength":1000`, 1),
		"number form":   strings.Replace(base, `"maxLength":100`, `"maxLength":100.0`, 1),
		"annotations":   strings.Replace(base, `"readOnlyHint":true`, `"readOnlyHint":false`, 1),
		"title added":   strings.Replace(base, `{"name"`, `{"title":"Search","name"`, 1),
		"output schema": strings.Replace(base, `{"name"`, `{"outputSchema":{"type":"object"},"name"`, 1),
	}
	for what, s := range different {
		if _, got, err := Canonical(Tools, json.RawMessage(s)); err != nil || got == sum {
			t.Errorf("a change of %s did not change the hash (%v)", what, err)
		}
	}
	// Prompts pin their arguments; resources their URI and MIME type.
	p1, _, _ := Canonical(Prompts, json.RawMessage(`{"name":"p","arguments":[{"name":"a","required":true}],"icons":[]}`))
	if string(p1) != `{"arguments":[{"name":"a","required":true}],"name":"p"}` {
		t.Errorf("prompt canonical form: %s", p1)
	}
	r1, _, _ := Canonical(Resources, json.RawMessage(`{"uri":"a://b","name":"b","mimeType":"text/plain","size":12}`))
	if string(r1) != `{"mimeType":"text/plain","name":"b","uri":"a://b"}` {
		t.Errorf("resource canonical form: %s", r1)
	}
	if _, _, err := Canonical(Tools, json.RawMessage(`[1]`)); err == nil {
		t.Error("a definition that is not an object was accepted")
	}
}

func TestCompare(t *testing.T) {
	snap := func(defs ...string) Server {
		t.Helper()
		var list []Def
		for _, d := range defs {
			var v struct{ Name string }
			_ = json.Unmarshal([]byte(d), &v)
			list = append(list, Def{Key: v.Name, Raw: json.RawMessage(d)})
		}
		s, err := Snapshot(map[Kind][]Def{Tools: list})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	pinned := snap(`{"name":"a","description":"A."}`, `{"name":"b","description":"B."}`, `{"name":"c"}`)
	now := snap(`{"name":"a","description":"A."}`, `{"name":"b","description":"B, and more."}`, `{"name":"d"}`)
	var got []string
	for _, c := range Compare("s", pinned, now) {
		got = append(got, string(c.Status)+" "+c.Key)
		if c.Status == Changed && (!strings.Contains(string(c.Old), "B.") || !strings.Contains(string(c.New), "B, and more.")) {
			t.Errorf("the change of b carries %s -> %s", c.Old, c.New)
		}
	}
	if strings.Join(got, ", ") != "changed b, removed c, new d" {
		t.Errorf("Compare: %v", got)
	}
	if n := len(Compare("s", nil, now)); n != 3 {
		t.Errorf("a server never pinned: %d changes, want every item new", n)
	}
	if !pinned.Matches(Tools, "a", now[Tools]["a"].SHA256) || pinned.Matches(Tools, "b", now[Tools]["b"].SHA256) || pinned.Matches(Tools, "d", now[Tools]["d"].SHA256) {
		t.Error("Matches does not tell a pinned definition from a changed or new one")
	}
}
