package relay

import "sync"

// Shares counts the holders of each thing held once at a server on behalf
// of many: the listens of stateless hosts and the subscriptions of
// 2025-era sessions on one URI are one subscription upstream, ended with
// the last. The zero value is ready.
type Shares struct {
	mu   sync.Mutex // serialises taking and giving up the thing itself
	refs map[string]int
}

// Acquire takes a share of key, calling first to take the thing itself
// when no share is held; its error leaves no share taken.
func (s *Shares) Acquire(key string, first func() error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refs[key] == 0 {
		if err := first(); err != nil {
			return err
		}
	}
	if s.refs == nil {
		s.refs = map[string]int{}
	}
	s.refs[key]++
	return nil
}

// Release gives up one share of key, calling last to give up the thing
// itself with the last share.
func (s *Shares) Release(key string, last func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refs == nil {
		s.refs = map[string]int{} // a release before any acquire: nothing held
	}
	if s.refs[key]--; s.refs[key] > 0 {
		return
	}
	delete(s.refs, key)
	last()
}
