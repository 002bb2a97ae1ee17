package catalog

import (
	"encoding/json"
	"sort"
	"strings"
	"unicode"
)

// Search ranks tools by how well they match the query's words: a word
// found in the name counts most, then title and parameter names, then the
// description. Ties keep catalog (name) order, so results are stable.
func Search(tools []Entry, query string, limit int) []Entry {
	words := keywords(query)
	type scored struct {
		e     Entry
		score int
	}
	var hits []scored
	for _, e := range tools {
		doc := toolDocument(e.Item)
		score := 0
		for _, w := range words {
			score += 5*count(doc.name, w) + 3*count(doc.title, w) + 3*count(doc.params, w) + count(doc.description, w)
		}
		if score > 0 {
			hits = append(hits, scored{e, score})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].score > hits[j].score })
	out := make([]Entry, 0, min(limit, len(hits)))
	for _, h := range hits[:min(limit, len(hits))] {
		out = append(out, h.e)
	}
	return out
}

// stopWords are words a query is phrased with that say nothing about the
// tool: counted, they rank the longest descriptions first ("show the
// environment variables" found server-filesystem's read_text_file, whose
// description says "the" nine times, before get-env).
var stopWords = map[string]bool{
	"a": true, "an": true, "the": true, "of": true, "in": true, "on": true, "at": true, "to": true,
	"for": true, "by": true, "with": true, "from": true, "into": true, "and": true, "or": true,
	"is": true, "are": true, "be": true, "it": true, "its": true, "this": true, "that": true,
	"as": true, "me": true, "my": true, "i": true, "some": true, "please": true,
}

// keywords are the query's words without stop words, or all of them when
// nothing else is left.
func keywords(query string) []string {
	words := tokens(query)
	var out []string
	for _, w := range words {
		if !stopWords[w] {
			out = append(out, w)
		}
	}
	if len(out) == 0 {
		return words
	}
	return out
}

// document is the searchable text of a tool, as word lists.
type document struct {
	name, title, description, params []string
}

func toolDocument(item json.RawMessage) document {
	var t struct {
		Name        string `json:"name"`
		Title       string `json:"title"`
		Description string `json:"description"`
		InputSchema struct {
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"inputSchema"`
	}
	_ = json.Unmarshal(item, &t)
	var params []string
	for p := range t.InputSchema.Properties {
		params = append(params, tokens(p)...)
	}
	return document{name: tokens(t.Name), title: tokens(t.Title), description: tokens(t.Description), params: params}
}

// tokens splits text into lower-case words at anything that is not a
// letter or digit, and at camelCase humps, so "readFile", "read_file" and
// "read file" all give "read", "file".
func tokens(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	var prev rune
	for _, r := range s {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
		prev = r
	}
	flush()
	return out
}

// count is how many of words match w: equal, or sharing a stem of at least
// four letters (so "files" finds "file" and "listing" finds "list").
func count(words []string, w string) int {
	n := 0
	for _, x := range words {
		if x == w || (len(w) >= 4 && strings.HasPrefix(x, w[:4]) && len(x) >= 4 && strings.HasPrefix(w, x[:4])) {
			n++
		}
	}
	return n
}
