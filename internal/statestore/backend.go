package statestore

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"time"
)

// Backend is where a Store's records live: raw bytes by name, each with
// an expiry (zero: none), past which Get no longer finds it. A Backend
// never sees a value in the clear that the Store's caller asked to seal.
type Backend interface {
	// Get returns the record under name, or ErrNotFound.
	Get(ctx context.Context, name string) ([]byte, error)
	// Put writes record under name until expires (zero: no expiry).
	Put(ctx context.Context, name string, record []byte, expires time.Time) error
	// Delete removes name; a name not there is no error.
	Delete(ctx context.Context, name string) error
	// Swap writes record under name until expires only if name still
	// holds old (unexpired), and reports whether it did: a write that
	// must not undo another one made meanwhile.
	Swap(ctx context.Context, name string, old, record []byte, expires time.Time) (bool, error)
	// Take returns the record under name and deletes it in one step: of
	// any number of takers, one gets it and the others ErrNotFound.
	Take(ctx context.Context, name string) ([]byte, error)
	// Ping reports whether the backend answers.
	Ping(ctx context.Context) error
	// Kind is "memory", "embedded" or "redis"; Where the file or the URL
	// without its password ("" for memory).
	Kind() string
	Where() string
	Close() error
}

// ErrNotFound is Get's answer for a name with no record, or one expired.
var ErrNotFound = errors.New("not found")

// Memory is the Backend of a trunk without trunk.state: records in the
// process's memory, which a restart loses.
type Memory struct {
	now func() time.Time

	mu      sync.Mutex
	records map[string]memRecord
	puts    int // since the last sweep
}

type memRecord struct {
	data    []byte
	expires time.Time
}

// sweepEvery is how many writes pass between sweeps of expired records
// in Memory and the embedded store; reads drop the expired ones they meet.
const sweepEvery = 1024

// NewMemory returns an empty Memory backend; now is time.Now when nil.
func NewMemory(now func() time.Time) *Memory {
	if now == nil {
		now = time.Now
	}
	return &Memory{now: now, records: map[string]memRecord{}}
}

func (m *Memory) Get(_ context.Context, name string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.records[name]
	if !ok {
		return nil, ErrNotFound
	}
	if expired(r.expires, m.now()) {
		delete(m.records, name)
		return nil, ErrNotFound
	}
	return append([]byte(nil), r.data...), nil
}

func (m *Memory) Put(_ context.Context, name string, record []byte, expires time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.records[name] = memRecord{data: record, expires: expires}
	if m.puts++; m.puts >= sweepEvery {
		m.puts = 0
		now := m.now()
		for k, r := range m.records {
			if expired(r.expires, now) {
				delete(m.records, k)
			}
		}
	}
	return nil
}

func (m *Memory) Swap(_ context.Context, name string, old, record []byte, expires time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.records[name]
	if !ok || expired(r.expires, m.now()) || !bytes.Equal(r.data, old) {
		return false, nil
	}
	m.records[name] = memRecord{data: record, expires: expires}
	return true, nil
}

func (m *Memory) Take(_ context.Context, name string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.records[name]
	delete(m.records, name)
	if !ok || expired(r.expires, m.now()) {
		return nil, ErrNotFound
	}
	return r.data, nil
}

func (m *Memory) Delete(_ context.Context, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.records, name)
	return nil
}

func (m *Memory) Ping(context.Context) error { return nil }
func (m *Memory) Kind() string               { return "memory" }
func (m *Memory) Where() string              { return "" }
func (m *Memory) Close() error               { return nil }

func expired(expires, now time.Time) bool { return !expires.IsZero() && !now.Before(expires) }
