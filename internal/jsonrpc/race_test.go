//go:build race

package jsonrpc

// raceEnabled: under -race sync.Pool drops items at random, so counts of
// allocations are not exact.
const raceEnabled = true
