// Package wording has the small helpers that make the messages people
// read (the command line's, the status page's) grammatical, so that no
// count says "1 servers".
package wording

import "fmt"

// Count is n and the noun for it: one for 1, many for any other number
// ("1 server", "0 servers", "2 servers").
func Count[N integer](n N, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

type integer interface {
	~int | ~int32 | ~int64 | ~uint | ~uint32 | ~uint64
}
