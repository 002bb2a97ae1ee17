package naming

import (
	"fmt"
	"regexp"
	"strings"
)

// Template is a compiled URI template (RFC 6570), for telling whether a URI
// could be one of its expansions. A server that keeps its own URIs (an
// unprefixed one) has no mcptrunk://<server>/ in them to route by, so a
// read of a URI it does not list goes to the server whose template fits.
type Template struct {
	re *regexp.Regexp
}

// ParseTemplate compiles tpl. Its literal text must appear as it is; an
// expression without an operator ({id}) or with "." or ";" matches a run of
// characters without "/", "?" or "#" (its expansion percent-encodes them);
// one with another operator ({+path}, {#frag}, {/seg}, {?q}, {&q})
// matches anything, as its expansion may carry reserved characters. Either
// may match nothing (an undefined variable expands to nothing). The error
// names the template when a brace is not closed or an expression is empty.
func ParseTemplate(tpl string) (Template, error) {
	var b strings.Builder
	b.WriteString("^")
	rest := tpl
	for rest != "" {
		open := strings.IndexAny(rest, "{}")
		if open < 0 {
			b.WriteString(regexp.QuoteMeta(rest))
			break
		}
		if rest[open] == '}' {
			return Template{}, fmt.Errorf("uri template %q: a '}' without its '{'", tpl)
		}
		b.WriteString(regexp.QuoteMeta(rest[:open]))
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			return Template{}, fmt.Errorf("uri template %q: a '{' that is not closed", tpl)
		}
		expr := rest[open+1 : open+end]
		if expr == "" || strings.ContainsRune(expr, '{') {
			return Template{}, fmt.Errorf("uri template %q: an empty or nested expression", tpl)
		}
		switch expr[0] {
		case '+', '#', '/', '?', '&':
			b.WriteString(".*")
		default:
			b.WriteString("[^/?#]*")
		}
		rest = rest[open+end+1:]
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return Template{}, fmt.Errorf("uri template %q: %w", tpl, err)
	}
	return Template{re: re}, nil
}

// Matches reports whether uri could be an expansion of the template. The
// zero Template matches nothing.
func (t Template) Matches(uri string) bool {
	return t.re != nil && t.re.MatchString(uri)
}
