package upstream

import (
	"testing"
	"time"
)

// The default backoff docs/failures.md promises: 250 ms, doubling, capped at 30 s.
func TestDefaultRestartBackoff(t *testing.T) {
	want := []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second,
		4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second}
	for i, w := range want {
		if got := DefaultRestartPolicy.delay(i + 1); got != w {
			t.Errorf("delay before restart %d = %v, want %v", i+1, got, w)
		}
	}
	if DefaultRestartPolicy.MaxAttempts != 6 || DefaultRestartPolicy.Stable != time.Minute {
		t.Errorf("DefaultRestartPolicy = %+v, docs/failures.md says 6 attempts and a count reset after a minute", DefaultRestartPolicy)
	}
}
