package naming

import (
	"strings"
	"unicode"
)

// transliterations spell Cyrillic and Greek letters in ASCII, for the
// name ServerID suggests when it refuses one ("погода" -> "pogoda"). Only
// a suggestion: those conventions vary, so mcptrunk does not apply one
// silently.
var transliterations = func() map[rune]string {
	m := map[rune]string{}
	add := func(letters string, spellings ...string) {
		for i, r := range []rune(letters) {
			m[r] = spellings[i]
		}
	}
	add("абвгдеёжзийклмнопрстуфхцчшщъыьэюяіїєґ",
		"a", "b", "v", "g", "d", "e", "e", "zh", "z", "i", "y", "k", "l", "m", "n", "o", "p", "r", "s", "t", "u", "f", "kh", "ts", "ch", "sh", "shch", "", "y", "", "e", "yu", "ya", "i", "yi", "ye", "g")
	add("αβγδεζηθικλμνξοπρσςτυφχψωάέήίόύώϊϋΐΰ",
		"a", "v", "g", "d", "e", "z", "i", "th", "i", "k", "l", "m", "n", "x", "o", "p", "r", "s", "s", "t", "y", "f", "ch", "ps", "o", "a", "e", "i", "i", "o", "y", "o", "i", "y", "i", "y")
	return m
}()

// transliterate spells r in ASCII by transliterations, keeping an upper
// case letter's case on its first letter; ok is false when the table has
// no entry.
func transliterate(r rune) (string, bool) {
	s, ok := transliterations[unicode.ToLower(r)]
	if !ok {
		return "", false
	}
	if unicode.IsUpper(r) && s != "" {
		s = strings.ToUpper(s[:1]) + s[1:]
	}
	return s, true
}
