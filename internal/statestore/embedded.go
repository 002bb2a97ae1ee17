package statestore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// bucket holds every record of the embedded store: 8 bytes of expiry
// (Unix nanoseconds, 0 for none), then the record.
var bucket = []byte("mcptrunk")

// Embedded is the Backend in one file (bbolt), for a single trunk: a
// restart finds what was written; a second process opening the same
// file waits for it up to a second and then fails (use Redis for
// replicas).
type Embedded struct {
	db   *bolt.DB
	path string
	now  func() time.Time

	mu   sync.Mutex
	puts int
}

// ErrInUse says the embedded store's file is open in another process.
var ErrInUse = errors.New("is open in another process")

// OpenEmbedded opens (or makes, 0600 in a 0700 directory) the store at
// path; now is time.Now when nil. Errors name trunk.state.path.
func OpenEmbedded(path string, now func() time.Time) (*Embedded, error) {
	if now == nil {
		now = time.Now
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("trunk.state.path: %w", err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("trunk.state.path: %s %w (the embedded store is one trunk's; replicas share Redis, trunk.state.url)", path, ErrInUse)
	}
	if err != nil {
		return nil, fmt.Errorf("trunk.state.path: %s: %w", path, err)
	}
	e := &Embedded{db: db, path: path, now: now}
	if err := db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(bucket)
		return err
	}); err != nil {
		db.Close()
		return nil, fmt.Errorf("trunk.state.path: %s: %w", path, err)
	}
	if err := e.sweep(); err != nil {
		db.Close()
		return nil, fmt.Errorf("trunk.state.path: %s: %w", path, err)
	}
	return e, nil
}

func (e *Embedded) Get(_ context.Context, name string) ([]byte, error) {
	var out []byte
	stale := false
	err := e.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucket).Get([]byte(name))
		if len(v) < 8 {
			return ErrNotFound
		}
		if expired(unixNano(v[:8]), e.now()) {
			stale = true
			return ErrNotFound
		}
		out = append([]byte(nil), v[8:]...) // v is the mmap's, valid in the transaction only
		return nil
	})
	if stale {
		// Deleted only if still expired: a Put since the read is kept.
		_ = e.db.Update(func(tx *bolt.Tx) error {
			b := tx.Bucket(bucket)
			if v := b.Get([]byte(name)); len(v) >= 8 && expired(unixNano(v[:8]), e.now()) {
				return b.Delete([]byte(name))
			}
			return nil
		})
	}
	return out, err
}

func (e *Embedded) Swap(_ context.Context, name string, old, record []byte, expires time.Time) (bool, error) {
	v := embeddedValue(record, expires)
	swapped := false
	err := e.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucket)
		cur := b.Get([]byte(name))
		if len(cur) < 8 || expired(unixNano(cur[:8]), e.now()) || !bytes.Equal(cur[8:], old) {
			return nil
		}
		swapped = true
		return b.Put([]byte(name), v)
	})
	return swapped && err == nil, err
}

func (e *Embedded) Take(_ context.Context, name string) ([]byte, error) {
	var out []byte
	err := e.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucket)
		v := b.Get([]byte(name))
		if v == nil {
			return nil
		}
		if len(v) >= 8 && !expired(unixNano(v[:8]), e.now()) {
			out = append([]byte(nil), v[8:]...) // v is the mmap's, valid in the transaction only
		}
		return b.Delete([]byte(name)) // an expired one too
	})
	if err == nil && out == nil {
		return nil, ErrNotFound
	}
	return out, err
}

// embeddedValue is record as the bucket holds it, after its expiry.
func embeddedValue(record []byte, expires time.Time) []byte {
	v := make([]byte, 8, 8+len(record))
	if !expires.IsZero() {
		binary.BigEndian.PutUint64(v, uint64(expires.UnixNano()))
	}
	return append(v, record...)
}

func (e *Embedded) Put(_ context.Context, name string, record []byte, expires time.Time) error {
	v := embeddedValue(record, expires)
	if err := e.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucket).Put([]byte(name), v) }); err != nil {
		return err
	}
	e.mu.Lock()
	e.puts++
	sweep := e.puts >= sweepEvery
	if sweep {
		e.puts = 0
	}
	e.mu.Unlock()
	if sweep {
		return e.sweep()
	}
	return nil
}

func (e *Embedded) Delete(_ context.Context, name string) error {
	return e.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucket).Delete([]byte(name)) })
}

// sweep deletes the expired records.
func (e *Embedded) sweep() error {
	now := e.now()
	return e.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucket)
		var gone [][]byte
		_ = b.ForEach(func(k, v []byte) error {
			if len(v) < 8 || expired(unixNano(v[:8]), now) {
				gone = append(gone, append([]byte(nil), k...))
			}
			return nil
		})
		for _, k := range gone {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
}

func unixNano(b []byte) time.Time {
	n := binary.BigEndian.Uint64(b)
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, int64(n))
}

// Ping fails once the file is closed; an open bbolt file always answers.
func (e *Embedded) Ping(context.Context) error {
	return e.db.View(func(*bolt.Tx) error { return nil })
}

func (e *Embedded) Kind() string  { return "embedded" }
func (e *Embedded) Where() string { return e.path }
func (e *Embedded) Close() error  { return e.db.Close() }
