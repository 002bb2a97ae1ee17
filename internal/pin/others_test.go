package pin

import (
	"slices"
	"testing"
)

func TestOtherNames(t *testing.T) {
	plain := map[string]bool{"bare": true}
	exported := func(server, key string) string {
		if plain[server] {
			return key
		}
		return "mcp__" + server + "__" + key
	}
	got := OtherNames(map[string][]string{
		"notes": {"search", "add_note"},
		"bare":  {"read_file", "search"},
	}, exported)
	for _, l := range got {
		slices.Sort(l)
	}
	// notes must not mention bare's exported names; bare's own name
	// "search" is notes' own too, so it is left out.
	if want := []string{"read_file"}; !slices.Equal(got["notes"], want) {
		t.Errorf("notes: %q, want %q", got["notes"], want)
	}
	// bare must not mention notes' exported names, nor the distinctive
	// own name add_note; "search" is bare's own.
	if want := []string{"add_note", "mcp__notes__add_note", "mcp__notes__search"}; !slices.Equal(got["bare"], want) {
		t.Errorf("bare: %q, want %q", got["bare"], want)
	}
}
