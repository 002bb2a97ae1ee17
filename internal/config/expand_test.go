package config

import (
	"strings"
	"testing"
)

func mapLookup(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

func TestExpand(t *testing.T) {
	env := mapLookup(map[string]string{
		"HOME":  "/home/alice",
		"TOKEN": "s3cr3t",
		"EMPTY": "",
		"REF":   "${HOME}", // values are never expanded again
		"_X1":   "x",
	})
	tests := []struct {
		name    string
		in      string
		want    string
		wantErr string // substring; "" means no error
	}{
		{name: "no variables", in: "plain text", want: "plain text"},
		{name: "empty", in: "", want: ""},
		{name: "set", in: "${HOME}/src", want: "/home/alice/src"},
		{name: "set in middle", in: "Bearer ${TOKEN}!", want: "Bearer s3cr3t!"},
		{name: "two variables", in: "${HOME}:${TOKEN}", want: "/home/alice:s3cr3t"},
		{name: "adjacent", in: "${_X1}${_X1}", want: "xx"},
		{name: "set and empty is empty", in: "a${EMPTY}b", want: "ab"},
		{name: "unset", in: "Bearer ${NOPE}", wantErr: `variable "NOPE" is not set`},
		{name: "unset with default", in: "${NOPE:-info}", want: "info"},
		{name: "empty with default", in: "${EMPTY:-info}", want: "info"},
		{name: "set ignores default", in: "${HOME:-/root}", want: "/home/alice"},
		{name: "empty default", in: "[${NOPE:-}]", want: "[]"},
		{name: "default with colon and dash", in: "${NOPE:-a:-b-c}", want: "a:-b-c"},
		{name: "default ends at first brace", in: "${NOPE:-a}b}", want: "ab}"},
		{name: "default with dollar", in: "${NOPE:-$5}", want: "$5"},
		{name: "nested braces", in: "${NOPE:-${HOME}}", wantErr: `variable "NOPE": nested "${" in the default is not supported`},
		{name: "nested braces when set", in: "${HOME:-${TOKEN}}", wantErr: "nested"},
		{name: "value not re-expanded", in: "${REF}", want: "${HOME}"},
		{name: "lone dollar", in: "cost $5", want: "cost $5"},
		{name: "trailing dollar", in: "abc$", want: "abc$"},
		{name: "dollar VAR without braces", in: "$HOME/src", want: "$HOME/src"},
		{name: "windows path", in: `C:\$Recycle.Bin\x`, want: `C:\$Recycle.Bin\x`},
		{name: "double dollar", in: "pid $$", want: "pid $$"},
		{name: "escaped brace", in: "$${HOME}", want: "${HOME}"},
		{name: "escaped then real", in: "$${HOME}=${HOME}", want: "${HOME}=/home/alice"},
		{name: "dollar then brace text", in: "$ {HOME}", want: "$ {HOME}"},
		{name: "unterminated", in: "a ${HOME", wantErr: `unterminated "${" at byte 2`},
		{name: "unterminated at end", in: "${", wantErr: "unterminated"},
		{name: "unterminated default", in: "${NOPE:-x", wantErr: "unterminated"},
		{name: "empty name", in: "${}", wantErr: "invalid variable reference at byte 0"},
		{name: "empty name with default", in: "${:-x}", wantErr: "invalid variable reference"},
		{name: "name with digit first", in: "${1A}", wantErr: "invalid variable reference"},
		{name: "unsupported unset-only form", in: "${NOPE-x}", wantErr: "invalid variable reference"},
		{name: "unsupported colon form", in: "${NOPE:x}", wantErr: "invalid variable reference"},
		{name: "space in name", in: "${A B}", wantErr: "invalid variable reference"},
		{name: "unicode text kept", in: "héllo ${_X1} wörld", want: "héllo x wörld"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Expand(tt.in, env)
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("Expand(%q) = %q, want error containing %q", tt.in, got, tt.wantErr)
				}
				if !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Expand(%q) error = %q, want it to contain %q", tt.in, err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "s3cr3t") || strings.Contains(err.Error(), "/home/alice") {
					t.Fatalf("Expand(%q) error %q leaks a variable value", tt.in, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Expand(%q) error: %v", tt.in, err)
			}
			if got != tt.want {
				t.Fatalf("Expand(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestExpandLooksUpOnlyReferencedNames(t *testing.T) {
	var asked []string
	lookup := func(k string) (string, bool) {
		asked = append(asked, k)
		return "v", true
	}
	if _, err := Expand("$A ${B} ${C:-d} $${D}", lookup); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(asked, ","); got != "B,C" {
		t.Fatalf("looked up %q, want B,C", got)
	}
}
