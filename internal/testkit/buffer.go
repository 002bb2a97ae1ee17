// Package testkit is what the tests of several packages share: a buffer that
// logs can be written to while a test reads them, building the example
// servers once, the npm servers' paths, server-everything listening on
// loopback, a redis-server of a test's own, and a go-sdk host over a
// command's stdio. Only tests import it,
// and mcptrunk-bench for the npm servers' paths.
package testkit

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer safe for concurrent writers and readers: a log
// sink a test reads while the code under test writes to it.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
