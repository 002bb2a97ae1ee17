package results

import (
	"crypto/rand"
	"encoding/hex"
	"slices"
	"sync"
	"time"
)

// Defaults of a Store's bounds (Options).
const (
	DefaultMaxBytes      = 64 << 20
	defaultMaxOwnerBytes = 16 << 20
	defaultTTL           = 15 * time.Minute
)

// Options bound a Store; a zero field takes its default (64 MiB in all,
// 16 MiB an owner, 15 minutes).
type Options struct {
	// MaxBytes bounds the bytes (a Whole's size) kept for every owner at
	// once: past it the oldest whole, whoever's, goes first.
	MaxBytes int64
	// MaxOwnerBytes bounds one owner's: past it the owner's oldest goes
	// first; a whole larger than it is not kept.
	MaxOwnerBytes int64
	// TTL is how long a whole is kept.
	TTL time.Duration
	// Now is the clock (time.Now).
	Now func() time.Time
}

// Store keeps the wholes of cut results, each for its owner alone: Get
// by another owner finds nothing, as for an id never given. Wholes expire
// TTL after they were kept and are swept as others are kept; nothing runs
// in the background. Safe for concurrent use.
type Store[K comparable] struct {
	opts Options

	mu    sync.Mutex
	kept  map[string]*entry[K]
	order []string // ids, oldest first (and so first to expire)
	bytes int64
	owned map[K]int64
}

type entry[K comparable] struct {
	owner   K
	whole   Whole
	size    int64
	expires time.Time
}

// NewStore returns an empty store bounded by opts (nil: the defaults).
func NewStore[K comparable](opts *Options) *Store[K] {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxOwnerBytes <= 0 {
		o.MaxOwnerBytes = defaultMaxOwnerBytes
	}
	o.MaxOwnerBytes = min(o.MaxOwnerBytes, o.MaxBytes)
	if o.TTL <= 0 {
		o.TTL = defaultTTL
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Store[K]{opts: o, kept: map[string]*entry[K]{}, owned: map[K]int64{}}
}

// TTL is how long a whole is kept.
func (s *Store[K]) TTL() time.Duration { return s.opts.TTL }

// MaxOwnerBytes is the most one owner's wholes take.
func (s *Store[K]) MaxOwnerBytes() int64 { return s.opts.MaxOwnerBytes }

// Keep keeps w for owner and returns its id (128 random bits, in hex),
// making room by dropping the oldest wholes, the owner's first; false
// when w alone is larger than an owner may keep.
func (s *Store[K]) Keep(owner K, w Whole) (string, bool) {
	size := int64(w.size())
	if size > s.opts.MaxOwnerBytes {
		return "", false
	}
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	id := hex.EncodeToString(b[:])
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.opts.Now()
	s.sweep(now)
	for i := 0; s.owned[owner]+size > s.opts.MaxOwnerBytes && i < len(s.order); {
		if e := s.kept[s.order[i]]; e.owner == owner {
			s.drop(i)
		} else {
			i++
		}
	}
	for s.bytes+size > s.opts.MaxBytes && len(s.order) > 0 {
		s.drop(0)
	}
	s.kept[id] = &entry[K]{owner: owner, whole: w, size: size, expires: now.Add(s.opts.TTL)}
	s.order = append(s.order, id)
	s.bytes += size
	s.owned[owner] += size
	return id, true
}

// Get returns the whole kept under id for owner; false when there is
// none, it expired, or it is another owner's.
func (s *Store[K]) Get(owner K, id string) (Whole, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.kept[id]
	if !ok || e.owner != owner || !s.opts.Now().Before(e.expires) {
		return Whole{}, false
	}
	return e.whole, true
}

// Drop forgets every whole of owner (its session ended).
func (s *Store[K]) Drop(owner K) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.owned[owner] == 0 {
		return
	}
	for i := 0; i < len(s.order); {
		if s.kept[s.order[i]].owner == owner {
			s.drop(i)
		} else {
			i++
		}
	}
}

// Bytes is what the store keeps now, and for how many results.
func (s *Store[K]) Bytes() (bytes int64, results int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep(s.opts.Now())
	return s.bytes, len(s.order)
}

// sweep drops the wholes expired at now: the oldest, at the front.
func (s *Store[K]) sweep(now time.Time) {
	for len(s.order) > 0 && !now.Before(s.kept[s.order[0]].expires) {
		s.drop(0)
	}
}

// drop forgets the whole at order[i]. s.mu is held.
func (s *Store[K]) drop(i int) {
	id := s.order[i]
	e := s.kept[id]
	delete(s.kept, id)
	s.order = slices.Delete(s.order, i, i+1)
	s.bytes -= e.size
	if s.owned[e.owner] -= e.size; s.owned[e.owner] == 0 {
		delete(s.owned, e.owner)
	}
}
