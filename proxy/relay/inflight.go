package relay

import (
	"slices"
	"sync"
)

// InFlight lists, per server, the sessions with a call in flight on it,
// oldest first. The zero value is ready.
type InFlight[S comparable] struct {
	mu    sync.Mutex
	calls map[string][]S
}

// Began records that s has a call in flight on server; the func ends it.
func (f *InFlight[S]) Began(s S, server string) func() {
	f.mu.Lock()
	if f.calls == nil {
		f.calls = map[string][]S{}
	}
	f.calls[server] = append(f.calls[server], s)
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		list := f.calls[server]
		if i := slices.Index(list, s); i >= 0 {
			list = slices.Delete(list, i, i+1)
		}
		if len(list) == 0 {
			delete(f.calls, server)
		} else {
			f.calls[server] = list
		}
	}
}

// On returns the sessions with a call in flight on server, oldest first.
func (f *InFlight[S]) On(server string) []S {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls[server])
}

// busy reports whether s has a call in flight on server.
func (f *InFlight[S]) busy(s S, server string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Contains(f.calls[server], s)
}

// Servers counts the servers with a call in flight.
func (f *InFlight[S]) Servers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}
