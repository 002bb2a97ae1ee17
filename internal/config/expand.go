package config

import (
	"fmt"
	"strings"
)

// Expand expands ${VAR} and ${VAR:-default} in s using lookup.
//
// Rules:
//   - ${VAR} is replaced by the value of VAR; VAR unset is an error naming
//     the variable (variable "TOKEN" is not set). VAR set to "" expands to "".
//   - ${VAR:-default} uses default when VAR is unset or empty (shell
//     semantics). The default is literal text that ends at the first "}";
//     it is not expanded again, and a "${" inside it is an error rather than
//     silently producing surprising output.
//   - "$${" is an escape for a literal "${".
//   - Every other "$" is left as is: a lone "$", "$$" and "$VAR" without
//     braces are not expanded (Windows paths and shell arguments contain "$").
//   - An unterminated "${" and a reference whose name is not
//     [A-Za-z_][A-Za-z0-9_]* are errors.
//
// Expansion is a single pass: values substituted are never expanded again.
// Error messages contain variable names and byte offsets only, never values.
func Expand(s string, lookup func(string) (string, bool)) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		rest := s[i:]
		switch {
		case strings.HasPrefix(rest, "$${"):
			b.WriteString("${")
			i += 3
		case strings.HasPrefix(rest, "${"):
			end := strings.IndexByte(rest[2:], '}')
			if end < 0 {
				return "", fmt.Errorf(`unterminated "${" at byte %d`, i)
			}
			body := rest[2 : 2+end]
			name, def, hasDef := strings.Cut(body, ":-")
			if !validVarName(name) {
				return "", fmt.Errorf(`invalid variable reference at byte %d (want ${NAME} or ${NAME:-default})`, i)
			}
			if hasDef && strings.Contains(def, "${") {
				return "", fmt.Errorf(`variable %q: nested "${" in the default is not supported`, name)
			}
			v, ok := lookup(name)
			switch {
			case hasDef && (!ok || v == ""):
				v = def
			case !ok:
				return "", fmt.Errorf("variable %q is not set", name)
			}
			b.WriteString(v)
			i += 2 + end + 1
		default:
			// Copy up to the next '$' (or the end) in one go.
			n := strings.IndexByte(rest[1:], '$')
			if n < 0 {
				b.WriteString(rest)
				i = len(s)
			} else {
				b.WriteString(rest[:1+n])
				i += 1 + n
			}
		}
	}
	return b.String(), nil
}

// validVarName reports whether name is a POSIX-style environment variable
// name: a letter or underscore followed by letters, digits or underscores.
func validVarName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
