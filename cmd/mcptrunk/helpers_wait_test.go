package main

// Waiting: test contexts and polling until something holds.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// eventually retries f until it returns nil or the deadline passes, then
// returns its last error.
func eventually(ctx context.Context, every time.Duration, f func() error) error {
	for {
		err := f()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(every):
		}
	}
}

// testCtx returns a context bounded by d (and by the test's deadline).
func testCtx(t testing.TB, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// waitFor polls cond every 20ms until it holds or d passes.
func waitFor(ctx context.Context, d time.Duration, cond func() bool) bool {
	wctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return eventually(wctx, 20*time.Millisecond, func() error {
		if cond() {
			return nil
		}
		return fmt.Errorf("not yet")
	}) == nil
}

// waitStderrLine waits until stderr holds a line with every one of subs,
// and returns it.
func waitStderrLine(ctx context.Context, stderr *syncBuffer, within time.Duration, subs ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	var found string
	err := eventually(ctx, 20*time.Millisecond, func() error {
		for _, line := range strings.Split(stderr.String(), "\n") {
			if containsAll(line, subs...) {
				found = line
				return nil
			}
		}
		return fmt.Errorf("no stderr line with all of %q", subs)
	})
	return found, err
}
