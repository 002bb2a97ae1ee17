package hostcfg

import (
	"encoding/json"
	"testing"
)

func TestStripJSONC(t *testing.T) {
	in := `// Zed settings
{
  "theme": "One Dark", /* inline */
  "url": "https://example.com/a//b", // a comment after a string with //
  "quote": "a \"/* not a comment */\" b",
  "context_servers": {
    "x": {"command": "x", "args": ["a", "b",],}, // trailing commas
  },
  /* a block
     over lines */
}
`
	out, err := StripJSONC([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(in) {
		t.Fatalf("length %d, want %d", len(out), len(in))
	}
	for i := range in {
		if in[i] == '\n' && out[i] != '\n' {
			t.Fatalf("line break at %d lost", i)
		}
	}
	var v struct {
		URL, Quote string
		Servers    map[string]struct{ Args []string } `json:"context_servers"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if v.URL != "https://example.com/a//b" || v.Quote != `a "/* not a comment */" b` || len(v.Servers["x"].Args) != 2 {
		t.Errorf("strings changed: %+v", v)
	}
}

func TestStripJSONCErrors(t *testing.T) {
	for _, in := range []string{`{"a": "b`, `{"a": 1 /* open`, "{\"a\": \"x\ny\"}"} {
		if _, err := StripJSONC([]byte(in)); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}
