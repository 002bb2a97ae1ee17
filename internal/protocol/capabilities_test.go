package protocol

import "testing"

func TestParseServerCaps(t *testing.T) {
	for _, tt := range []struct {
		raw  string
		want ServerCaps
	}{
		{``, ServerCaps{}},
		{`{}`, ServerCaps{}},
		{`{"tools":{},"prompts":{"listChanged":true},"logging":{},"completions":{}}`, ServerCaps{Tools: true, Prompts: true, Logging: true, Completions: true}},
		{`{"resources":{}}`, ServerCaps{Resources: true}},
		{`{"resources":{"subscribe":true}}`, ServerCaps{Resources: true, Subscribe: true}},
	} {
		got, err := ParseServerCaps([]byte(tt.raw))
		if err != nil || got != tt.want {
			t.Errorf("ParseServerCaps(%s) = %+v, %v; want %+v", tt.raw, got, err, tt.want)
		}
	}
	if _, err := ParseServerCaps([]byte(`{"tools":`)); err == nil {
		t.Error("a truncated object parsed")
	}
}
