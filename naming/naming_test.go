package naming

import (
	"strings"
	"testing"
)

func TestConstants(t *testing.T) {
	// These values are part of the wire format; changing them renames every
	// exported tool, so pin them.
	if Prefix != "mcp__" || Separator != "__" || TrunkServer != "trunk" ||
		DefaultMaxLength != 64 || URIScheme != "mcptrunk" || MinItemRoom != 10 {
		t.Fatalf("constants changed: %q %q %q %d %q %d",
			Prefix, Separator, TrunkServer, DefaultMaxLength, URIScheme, MinItemRoom)
	}
}

func TestSanitize(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"legal unchanged", "Read_File-2", "Read_File-2"},
		{"dot", "a.b", "a_b"},
		{"space", "a b", "a_b"},
		{"slash and colon", "ns/x:y", "ns_x_y"},
		{"double underscore kept", "a__b", "a__b"},
		{"two byte rune is one underscore", "caf\u00e9", "caf_"},
		{"three byte rune", "\u65e5\u672c", "__"},
		{"four byte rune (emoji)", "x\U0001F600y", "x_y"},
		{"combining mark is its own rune", "e\u0301", "e_"},
		{"invalid utf8 byte", "a\xffb", "a_b"},
		{"control chars", "a\tb\nc\x00", "a_b_c_"},
		{"all illegal ascii", "!@#$%^&*()+=", "____________"},
		{"digits", "0123456789", "0123456789"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Sanitize(tt.in)
			if got != tt.want {
				t.Errorf("Sanitize(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if got != "" && !isLegal(got) {
				t.Errorf("Sanitize(%q) = %q contains illegal characters", tt.in, got)
			}
			if Sanitize(got) != got {
				t.Errorf("Sanitize not idempotent on %q", got)
			}
		})
	}
}

func TestName(t *testing.T) {
	tests := []struct {
		server, raw, want string
	}{
		{"files", "read_file", "mcp__files__read_file"},
		{"files", "read.file", "mcp__files__read_file"},
		{"brave_search", "web search", "mcp__brave_search__web_search"},
		{"s", "a__b", "mcp__s__a__b"},
		{"s", "\u00fcber", "mcp__s___ber"},
		{"s", "", "mcp__s__"},
		{"s", strings.Repeat("x", 100), "mcp__s__" + strings.Repeat("x", 100)}, // no budget
	}
	for _, tt := range tests {
		if got := Name(tt.server, tt.raw); got != tt.want {
			t.Errorf("Name(%q, %q) = %q, want %q", tt.server, tt.raw, got, tt.want)
		}
	}
}

func TestSplitMCPName(t *testing.T) {
	tests := []struct {
		in           string
		server, item string
		ok           bool
	}{
		{"mcp__files__read_file", "files", "read_file", true},
		{"mcp__s__a__b", "s", "a__b", true},   // "__" inside the item
		{"mcp__s___x", "s", "_x", true},       // item starting with '_'
		{"mcp__s____x", "s", "__x", true},     // item starting with "__"
		{"mcp___s__x", "_s", "x", true},       // server starting with '_'
		{"mcp__a-b__c-d", "a-b", "c-d", true}, // hyphens
		{"mcp__trunk__status", "trunk", "status", true},
		{"mcp__s__x_", "s", "x_", true},
		{"", "", "", false},
		{"mcp__", "", "", false},
		{"mcp__files", "", "", false},        // no separator
		{"mcp__files__", "", "", false},      // empty item
		{"mcp____x", "", "", false},          // empty server
		{"mcp_files__x", "", "", false},      // wrong prefix
		{"MCP__files__x", "", "", false},     // prefix is case-sensitive
		{"files__read_file", "", "", false},  // no prefix
		{"xmcp__files__read", "", "", false}, // prefix not at start
		{"mcp__files_read", "", "", false},   // single underscore only
	}
	for _, tt := range tests {
		server, item, ok := SplitMCPName(tt.in)
		if server != tt.server || item != tt.item || ok != tt.ok {
			t.Errorf("SplitMCPName(%q) = (%q, %q, %v), want (%q, %q, %v)",
				tt.in, server, item, ok, tt.server, tt.item, tt.ok)
		}
	}
}

func TestNameSplitRoundTrip(t *testing.T) {
	for _, server := range []string{"files", "a", "_a", "a-b", "brave_search", "trunk"} {
		for _, raw := range []string{"x", "read_file", "a__b", "_lead", "__lead", "trail_", "a.b", "\u65e5"} {
			s, item, ok := SplitMCPName(Name(server, raw))
			if !ok || s != server || item != Sanitize(raw) {
				t.Errorf("SplitMCPName(Name(%q, %q)) = (%q, %q, %v)", server, raw, s, item, ok)
			}
		}
	}
}
