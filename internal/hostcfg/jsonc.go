package hostcfg

import "errors"

// StripJSONC returns data, JSON with comments (Zed's and VS Code's
// settings), as plain JSON of exactly the same length: every // and /* */
// comment and every trailing comma before a closing } or ] is replaced by
// spaces, newlines are kept. Keeping every offset lets a caller find a
// member's bytes in the stripped text and splice the original file at the
// same place, so the comments elsewhere stay. Text inside strings is never
// touched. An unterminated block comment or string is an error.
func StripJSONC(data []byte) ([]byte, error) {
	out := make([]byte, len(data))
	copy(out, data)
	comma := -1 // offset of the last comma not yet followed by a value
	for i := 0; i < len(out); i++ {
		switch c := out[i]; {
		case c == '"':
			comma = -1
			j, ok := stringEnd(out, i)
			if !ok {
				return nil, errors.New("unterminated string")
			}
			i = j
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			for ; i < len(out) && out[i] != '\n'; i++ {
				out[i] = ' '
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			j := i + 2
			for ; j+1 < len(out) && !(out[j] == '*' && out[j+1] == '/'); j++ {
			}
			if j+1 >= len(out) {
				return nil, errors.New("unterminated /* comment")
			}
			blank(out[i : j+2])
			i = j + 1
		case c == ',':
			comma = i
		case c == '}' || c == ']':
			if comma >= 0 {
				out[comma] = ' '
			}
			comma = -1
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
		default:
			comma = -1
		}
	}
	return out, nil
}

// stringEnd returns the offset of the closing quote of the string that
// starts at data[start].
func stringEnd(data []byte, start int) (int, bool) {
	for j := start + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j, true
		case '\n':
			return 0, false
		}
	}
	return 0, false
}

// blank replaces b's bytes with spaces, keeping line breaks so that line
// numbers in errors still point at the right line.
func blank(b []byte) {
	for i, c := range b {
		if c != '\n' && c != '\r' {
			b[i] = ' '
		}
	}
}
