package pin

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Readable diffs of a changed definition, for "mcptrunk pin": a word diff
// of its texts (a description is prose the model reads) and a line diff of
// its indented JSON members (schemas, arguments, annotations). Both are an
// edit script over a longest common subsequence.

// FieldDiff is how one pinned member of a definition changed.
type FieldDiff struct {
	Field string
	// Words is a text member's WordDiff (Lines is nil).
	Words string
	// Lines is any other member's LineDiff of its indented JSON, with
	// DiffContext lines of context.
	Lines []string
}

// DiffContext is how many unchanged lines a line diff keeps around a change.
const DiffContext = 3

// DiffDefinitions lists the members that differ between two canonical
// definitions of one kind: the pinned members in their usual order, then
// any other, by name.
func DiffDefinitions(kind Kind, old, new json.RawMessage) []FieldDiff {
	a, b := members(old), members(new)
	fields := append([]string(nil), pinnedFields[kind]...)
	known := map[string]bool{}
	for _, f := range fields {
		known[f] = true
	}
	var extra []string
	for _, m := range []map[string]json.RawMessage{a, b} {
		for f := range m {
			if !known[f] {
				known[f] = true
				extra = append(extra, f)
			}
		}
	}
	sort.Strings(extra)
	var out []FieldDiff
	for _, f := range append(fields, extra...) {
		va, vb := a[f], b[f]
		if bytes.Equal(va, vb) {
			continue
		}
		sa, okA := textOf(va)
		sb, okB := textOf(vb)
		if okA && okB {
			out = append(out, FieldDiff{Field: f, Words: WordDiff(sa, sb)})
			continue
		}
		out = append(out, FieldDiff{Field: f, Lines: LineDiff(indented(va), indented(vb), DiffContext)})
	}
	return out
}

// members are a definition's members, each compacted: a definition read
// back from the lockfile is indented.
func members(def json.RawMessage) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(def, &m)
	for k, v := range m {
		var b bytes.Buffer
		if json.Compact(&b, v) == nil {
			m[k] = b.Bytes()
		}
	}
	return m
}

// textOf is a member's text: a JSON string, or nothing (an absent member).
func textOf(raw json.RawMessage) (string, bool) {
	if raw == nil {
		return "", true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// indented is a member's JSON indented by two spaces; "" when absent.
func indented(raw json.RawMessage) string {
	if raw == nil {
		return ""
	}
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		return string(raw)
	}
	return b.String()
}

// WordDiff shows how new differs from old word by word: words removed as
// [-old words-], words added as {+new words+}, the rest as it is. Spaces
// and line breaks are kept as written.
func WordDiff(old, new string) string {
	ops := diffTokens(words(old), words(new))
	// A space kept between two changes joins them into one:
	// "[-quick brown-]{+slow red+}" rather than "[-quick-]{+slow+} [-brown-]{+red+}".
	for i := 1; i+1 < len(ops); i++ {
		if ops[i].kind == '=' && isSpace(ops[i].text) && ops[i-1].kind != '=' && ops[i+1].kind != '=' {
			ops = append(ops[:i+1], ops[i:]...)
			ops[i].kind, ops[i+1].kind = '-', '+'
			i++
		}
	}
	var b, del, ins strings.Builder
	flush := func() {
		d, i := del.String(), ins.String()
		del.Reset()
		ins.Reset()
		// Space both sides begin or end with is shown as kept.
		var lead, trail string
		if d != "" && i != "" {
			lead = leadingSpace(d, i)
			d, i = d[len(lead):], i[len(lead):]
			trail = trailingSpace(d, i)
			d, i = d[:len(d)-len(trail)], i[:len(i)-len(trail)]
		}
		b.WriteString(lead)
		if d != "" {
			b.WriteString("[-" + d + "-]")
		}
		if i != "" {
			b.WriteString("{+" + i + "+}")
		}
		b.WriteString(trail)
	}
	for _, o := range ops {
		switch o.kind {
		case '-':
			del.WriteString(o.text)
		case '+':
			ins.WriteString(o.text)
		default:
			flush()
			b.WriteString(o.text)
		}
	}
	flush()
	return b.String()
}

// leadingSpace is the space both a and b begin with, leaving something
// of each.
func leadingSpace(a, b string) string {
	n := 0
	for n < len(a) && n < len(b) {
		r, size := utf8.DecodeRuneInString(a[n:])
		if r2, size2 := utf8.DecodeRuneInString(b[n:]); r != r2 || size != size2 || !unicode.IsSpace(r) ||
			n+size >= len(a) || n+size >= len(b) {
			break
		}
		n += size
	}
	return a[:n]
}

// trailingSpace is the space both a and b end with, leaving something of
// each.
func trailingSpace(a, b string) string {
	n := 0
	for n < len(a) && n < len(b) {
		r, size := utf8.DecodeLastRuneInString(a[:len(a)-n])
		if r2, size2 := utf8.DecodeLastRuneInString(b[:len(b)-n]); r != r2 || size != size2 || !unicode.IsSpace(r) ||
			n+size >= len(a) || n+size >= len(b) {
			break
		}
		n += size
	}
	return a[len(a)-n:]
}

// words splits s into runs of space and runs of anything else.
func words(s string) []string {
	var out []string
	start, inSpace := 0, false
	for i, r := range s {
		sp := unicode.IsSpace(r)
		if i > start && sp != inSpace {
			out = append(out, s[start:i])
			start = i
		}
		inSpace = sp
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

func isSpace(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return s != "" && unicode.IsSpace(r)
}

// LineDiff shows how new differs from old line by line: each line starts
// with "  " (kept), "- " (removed) or "+ " (added). With context >= 0 only
// that many kept lines are shown around each change, and every run of
// kept lines left out is one "  ..." line; a negative context shows all.
func LineDiff(old, new string, context int) []string {
	ops := diffTokens(lines(old), lines(new))
	show := make([]bool, len(ops))
	for i, o := range ops {
		if o.kind == '=' && context >= 0 {
			continue
		}
		for j := max(0, i-max(context, 0)); j <= min(len(ops)-1, i+max(context, 0)); j++ {
			show[j] = true
		}
	}
	var out []string
	for i, o := range ops {
		if !show[i] {
			if i == 0 || show[i-1] {
				out = append(out, "  ...")
			}
			continue
		}
		prefix := "  "
		if o.kind != '=' {
			prefix = string(o.kind) + " "
		}
		out = append(out, prefix+o.text)
	}
	return out
}

func lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// edit is one step of an edit script: a token kept ('='), removed ('-') or
// added ('+').
type edit struct {
	kind byte
	text string
}

// maxCells bounds the LCS table: beyond it (texts of thousands of words
// that differ throughout) the middle is shown as removed and added whole.
const maxCells = 1 << 21

// diffTokens is an edit script from a to b that keeps a longest common
// subsequence (on a tie, a removal comes first).
func diffTokens(a, b []string) []edit {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	out := make([]edit, 0, len(a)+len(b))
	for _, t := range a[:pre] {
		out = append(out, edit{'=', t})
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	n, m := len(ma), len(mb)
	if (n+1)*(m+1) > maxCells {
		for _, t := range ma {
			out = append(out, edit{'-', t})
		}
		for _, t := range mb {
			out = append(out, edit{'+', t})
		}
	} else {
		// l[i*(m+1)+j] is the length of an LCS of ma[i:] and mb[j:].
		w := m + 1
		l := make([]int32, (n+1)*w)
		for i := n - 1; i >= 0; i-- {
			for j := m - 1; j >= 0; j-- {
				if ma[i] == mb[j] {
					l[i*w+j] = l[(i+1)*w+j+1] + 1
				} else {
					l[i*w+j] = max(l[(i+1)*w+j], l[i*w+j+1])
				}
			}
		}
		i, j := 0, 0
		for i < n && j < m {
			switch {
			case ma[i] == mb[j]:
				out = append(out, edit{'=', ma[i]})
				i, j = i+1, j+1
			case l[(i+1)*w+j] >= l[i*w+j+1]:
				out = append(out, edit{'-', ma[i]})
				i++
			default:
				out = append(out, edit{'+', mb[j]})
				j++
			}
		}
		for ; i < n; i++ {
			out = append(out, edit{'-', ma[i]})
		}
		for ; j < m; j++ {
			out = append(out, edit{'+', mb[j]})
		}
	}
	for _, t := range a[len(a)-suf:] {
		out = append(out, edit{'=', t})
	}
	return out
}
