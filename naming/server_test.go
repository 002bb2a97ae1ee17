package naming

import (
	"fmt"
	"strings"
	"testing"
)

func TestServerID(t *testing.T) {
	tests := []struct {
		name    string
		want    string
		wantErr string // substring of the error; "" means success
	}{
		{"files", "files", ""},
		{"Files", "Files", ""},
		{"brave search", "brave_search", ""},
		{"my.srv", "my_srv", ""},
		{"a-b_c", "a-b_c", ""},
		{"_lead", "_lead", ""},
		{"x1", "x1", ""},
		{"caf\u00e9s", "caf_s", ""},
		{"trunk2", "trunk2", ""},
		{"trunk.x", "trunk_x", ""},
		{"mytrunk", "mytrunk", ""},

		{"", "", "may not be empty"},
		{"a__b", "", `may not contain "__"`},
		{"__", "", `may not contain "__"`},
		{"trunk", "", "reserved"},
		{"TRUNK", "", "reserved"},
		{"Trunk", "", "reserved"},
		{"a.", "", "ends with '_'"},
		{"a_", "", "ends with '_'"},
		{"files ", "", "ends with '_'"},
		{"trunk ", "", "ends with '_'"},
		{"\u00e9", "", "ends with '_'"},
		{"a. b", "", `contains "__"`},
		{"a._b", "", `contains "__"`},
		{"a_.b", "", `contains "__"`},
		{"\u65e5\u672c", "", `contains "__"`},
		{"a\u65e5\u672cb", "", `contains "__"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ServerID(tt.name)
			if tt.wantErr == "" {
				if err != nil || got != tt.want {
					t.Fatalf("ServerID(%q) = (%q, %v), want (%q, nil)", tt.name, got, err, tt.want)
				}
				if err := checkID(got); err != nil {
					t.Fatalf("ServerID(%q) returned %q which checkID rejects: %v", tt.name, got, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("ServerID(%q) = (%q, nil), want error containing %q", tt.name, got, tt.wantErr)
			}
			if got != "" {
				t.Errorf("ServerID(%q) returned %q alongside an error", tt.name, got)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.wantErr) {
				t.Errorf("ServerID(%q) error %q does not contain %q", tt.name, msg, tt.wantErr)
			}
			if want := fmt.Sprintf("server %q: ", tt.name); !strings.HasPrefix(msg, want) {
				t.Errorf("ServerID(%q) error %q does not start with %q", tt.name, msg, want)
			}
		})
	}
}

func TestServerIDErrorMessage(t *testing.T) {
	_, err := ServerID("a__b")
	if err == nil || err.Error() != `server "a__b": name may not contain "__"` {
		t.Fatalf("ServerID(%q) error = %v", "a__b", err)
	}
}
