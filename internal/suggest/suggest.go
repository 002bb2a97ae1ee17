// Package suggest finds the word a user probably meant: the closest of a
// set of known words by edit distance, for "did you mean" in messages about
// misspelt config keys and tool names.
package suggest

import (
	"strings"
	"unicode/utf8"
)

// Closest returns the candidate nearest to word, or "" when none is near
// enough to be a likely typo. Letter case does not count (toolsearch means
// toolSearch). Near enough is at most a third of the word's length in
// edits, at least one and at most three: one slip in a short word, two or
// three in a long name, never a different word that merely shares letters
// (mcp__notes__delete is no typo of mcp__notes__search). Ties go
// to the earlier candidate, so the answer does not depend on map order
// when the caller sorts.
func Closest(word string, candidates []string) string {
	best, bestDist := "", -1
	lw := strings.ToLower(word)
	n := utf8.RuneCountInString(lw)
	limit := min(3, max(1, utf8.RuneCountInString(word)/3))
	for _, c := range candidates {
		if c == word {
			continue
		}
		lc := strings.ToLower(c)
		// A length that differs by more than the limit is more edits away:
		// no table to fill (a name of megabytes costs a count, not
		// megabytes squared).
		if abs(utf8.RuneCountInString(lc)-n) > limit {
			continue
		}
		d := Distance(lw, lc)
		if d <= limit && (bestDist < 0 || d < bestDist) {
			best, bestDist = c, d
		}
	}
	return best
}

// Distance is the optimal string alignment distance of a and b in runes:
// insertions, deletions, substitutions and swaps of two neighbours each
// count one edit.
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// Three rows of the table: two back (for swaps), one back, current.
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
