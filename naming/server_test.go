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
		{"trunk2", "trunk2", ""},
		{"trunk.x", "trunk_x", ""},
		{"mytrunk", "mytrunk", ""},
		// Letters with accents and ligatures are spelt in ASCII; a run of
		// other characters is one '_', none at either end.
		{"cafés", "cafes", ""},
		{"météo fr", "meteo_fr", ""},
		{"straße", "strasse", ""},
		{"Ærø", "AEro", ""},
		{"é", "e", ""},
		{"été", "ete", ""}, // decomposed accents
		{"ﬁle²", "file2", ""},
		{"a.", "a", ""},
		{"files ", "files", ""},
		{" notes!", "notes", ""},
		{"a. b", "a_b", ""},
		{"a._b", "a_b", ""},
		{"a_.b", "a_b", ""},

		{"", "", "may not be empty"},
		{"a__b", "", `may not contain "__": exported names are split there (mcp__<server>__<tool>); use "a_b"`},
		{"__", "", `may not contain "__"`},
		{"trunk", "", `reserved for the proxy's own tools (mcp__trunk__status); use another, such as "trunk-server"`},
		{"TRUNK", "", "reserved"},
		{"Trunk", "", "reserved"},
		{"trunk ", "", "reserved"},
		{"trünk", "", "reserved"},
		{"a_", "", `may not end in '_': exported names are split at "__" (mcp__<server>__<tool>); use "a"`},
		{"...", "", "is empty; use a name with letters or digits"},
		// Letters without an ASCII spelling: refused, with a name to use.
		{"天气", "", `"天", "气" have no spelling in those; rename the entry, for instance to "u5929_u6c14"`},
		{"日本 api", "", `for instance to "u65e5_u672c_api"`},
		{"погода", "", `for instance to "pogoda"`},
		{"Київ", "", `for instance to "Kiyiv"`},
		{"Αθήνα", "", `for instance to "Athina"`},
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
	_, err := ServerID("天气")
	want := `server "天气": a server's name is part of every tool name it exports (mcp__<server>__<tool>), where hosts accept only A-Z, a-z, 0-9, '_' and '-', and "天", "气" have no spelling in those; rename the entry, for instance to "u5929_u6c14"`
	if err == nil || err.Error() != want {
		t.Fatalf("ServerID error = %v\nwant %s", err, want)
	}
}

// TestServerIDSuggestionsAreAccepted: the name a refusal suggests is one
// ServerID accepts.
func TestServerIDSuggestionsAreAccepted(t *testing.T) {
	for _, name := range []string{"a__b", "trunk", "a_", "天气", "погода 天", "x__天_", "__"} {
		s := suggestFor(name)
		if name == "trunk" {
			s = name + "-server"
		}
		if _, err := ServerID(s); err != nil {
			t.Errorf("%q: the suggestion %q is refused: %v", name, s, err)
		}
	}
}

func TestServerNameForURL(t *testing.T) {
	for url, want := range map[string]string{
		"https://mcp.example.com/mcp":     "mcp_example_com",
		"http://127.0.0.1:8080/mcp":       "127_0_0_1",
		"https://api.github-copilot.dev/": "api_github-copilot_dev",
		"https://user:pw@x..y/mcp":        "x_y",
		"https://trunk/mcp":               "remote",
		"https://TRUNK/mcp":               "remote",
		"not a url\x7f":                   "remote",
		"https:///mcp":                    "remote",
	} {
		if got := ServerNameForURL(url); got != want {
			t.Errorf("ServerNameForURL(%q) = %q, want %q", url, got, want)
		}
	}
}
