package httpserve

import (
	"runtime/debug"
	"sync/atomic"
	"time"
)

// Go's runtime keeps the memory a burst made it take long after the
// burst: a flood held for hosts that do not read (up to the pool's
// limit) would stay in the trunk's RSS once those sessions are gone. So
// when sessions that together held a lot have left, the pool hands the
// memory back to the system at once, at most every releaseEvery.
const (
	// releaseAfter is how much the pool must have held since the last
	// release for a release to be worth its cost (a full collection).
	releaseAfter = 16 << 20
	releaseEvery = 5 * time.Second
)

// releaser decides when to return memory to the system; its zero value
// is ready (release nil: debug.FreeOSMemory).
type releaser struct {
	peak    atomic.Int64 // the most held since the last release
	last    atomic.Int64 // unix nanoseconds of the last release
	count   atomic.Int64 // releases started
	release func()
}

// held notes that the pool holds used bytes now.
func (m *releaser) held(used int64) {
	for {
		peak := m.peak.Load()
		if used <= peak || m.peak.CompareAndSwap(peak, used) {
			return
		}
	}
}

// left is called when a session has left the pool, which now holds used
// bytes: if it held releaseAfter or more since the last release and
// three quarters of that are gone, the memory goes back to the system
// (in the background: a collection takes milliseconds, never the
// caller's).
func (m *releaser) left(used int64) {
	peak := m.peak.Load()
	if peak < releaseAfter || used > peak/4 {
		return
	}
	now := time.Now().UnixNano()
	last := m.last.Load()
	if now-last < int64(releaseEvery) || !m.last.CompareAndSwap(last, now) {
		return
	}
	m.peak.Store(used)
	m.count.Add(1)
	release := m.release
	if release == nil {
		release = debug.FreeOSMemory
	}
	go release()
}
