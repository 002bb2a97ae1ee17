//go:build !linux

package upstream

// Without /proc the tests cannot look at processes: the checks that need to
// are skipped, and the leftover check finds nothing.
const procfs = false

func alive(int) bool      { return false }
func tagged(string) []int { return nil }
