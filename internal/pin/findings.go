package pin

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Finding is something in a definition worth a person's look, found
// without a model: characters a person cannot see but the model reads,
// a description that names another server's tools (shadowing: telling the
// model how to use someone else's tool), or an unusually long description.
type Finding struct {
	Kind    Kind
	Key     string
	Problem string
}

// Invisible reports whether a finding is about invisible characters, which
// enforce mode withholds unless the definition is pinned as it is.
func (f Finding) Invisible() bool { return strings.HasPrefix(f.Problem, invisiblePrefix) }

const invisiblePrefix = "invisible characters"

// LongDescription is the length from which a description is reported.
const LongDescription = 2000

// Inspect looks at one canonical definition. others are names of other
// servers' tools (exported names, and their own names where distinctive)
// whose mention in a description counts as shadowing.
func Inspect(kind Kind, key string, canon json.RawMessage, others []string) []Finding {
	var d struct {
		Name        string `json:"name"`
		Title       string `json:"title"`
		Description string `json:"description"`
	}
	_ = json.Unmarshal(canon, &d)
	var out []Finding
	for _, field := range []struct{ name, text string }{{"name", d.Name}, {"title", d.Title}, {"description", d.Description}} {
		if chars := invisibleIn(field.text); len(chars) > 0 {
			out = append(out, Finding{kind, key, fmt.Sprintf("%s in its %s: %s", invisiblePrefix, field.name, strings.Join(chars, ", "))})
		}
	}
	for _, o := range others {
		if o != "" && containsWord(d.Description, o) {
			out = append(out, Finding{kind, key, fmt.Sprintf("its description names another server's tool %q", o)})
		}
	}
	if n := utf8.RuneCountInString(d.Description); n >= LongDescription {
		out = append(out, Finding{kind, key, fmt.Sprintf("its description is unusually long (%d characters)", n)})
	}
	return out
}

// invisibleIn names the invisible or direction-changing characters in s,
// each once: Unicode tag characters (U+E0000–U+E007F, which can spell out
// hidden text), zero-width characters, and bidirectional controls.
func invisibleIn(s string) []string {
	var found []string
	seen := map[rune]bool{}
	for _, r := range s {
		if !isInvisible(r) || seen[r] {
			continue
		}
		seen[r] = true
		found = append(found, fmt.Sprintf("U+%04X", r))
	}
	return found
}

func isInvisible(r rune) bool {
	switch {
	case r >= 0xE0000 && r <= 0xE007F: // tags
		return true
	case r >= 0x200B && r <= 0x200F: // zero-width space, non-joiner, joiner; LRM, RLM
		return true
	case r >= 0x202A && r <= 0x202E: // bidi embeddings and overrides
		return true
	case r >= 0x2066 && r <= 0x2069: // bidi isolates
		return true
	case r == 0x2060 || r == 0xFEFF || r == 0x061C || r == 0x180E: // word joiner, BOM, ALM, Mongolian vowel separator
		return true
	}
	return false
}

// containsWord reports whether s contains w not inside a longer name.
func containsWord(s, w string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(w)
		if (start == 0 || !nameByte(s[start-1])) && (end == len(s) || !nameByte(s[end])) {
			return true
		}
		i = start + 1
	}
}

func nameByte(c byte) bool {
	return c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
