//go:build !windows

package main

import (
	"os"
	"os/signal"
	"syscall"
)

// notifyReload delivers SIGHUP, the conventional "reload your config".
func notifyReload() (<-chan struct{}, func()) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGHUP)
	out := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(out)
		for {
			select {
			case <-sig:
				select {
				case out <- struct{}{}:
				case <-done:
					return
				}
			case <-done:
				return
			}
		}
	}()
	return out, func() { signal.Stop(sig); close(done) }
}
