package pin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// formatVersion is the lockfile format this package writes and reads.
const formatVersion = 1

// Entry is one pinned definition: its hash, and the canonical definition
// itself, so that a change can be shown as a diff and the file reviewed.
type Entry struct {
	SHA256     string          `json:"sha256"`
	Definition json.RawMessage `json:"definition"`
}

// Server is what is pinned of one server: per kind, per key (a tool's or
// prompt's name, a resource's URI, a template's URI template).
type Server map[Kind]map[string]Entry

// Lock is the lockfile's content.
type Lock struct {
	Version int               `json:"version"`
	Servers map[string]Server `json:"servers"`
}

// NewLock returns an empty lock.
func NewLock() *Lock { return &Lock{Version: formatVersion, Servers: map[string]Server{}} }

// Read reads the lockfile at path. A missing file is an empty lock (nothing
// pinned yet); a file that cannot be read or parsed is an error, which
// callers treat as "nothing can be trusted" where that matters.
func Read(path string) (*Lock, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return NewLock(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the lockfile: %w", err)
	}
	var l Lock
	if err := json.Unmarshal(data, &l); err != nil {
		return nil, fmt.Errorf("the lockfile %s is corrupt: %v", path, err)
	}
	if l.Version != formatVersion {
		return nil, fmt.Errorf("the lockfile %s has format version %d; this mcptrunk reads version %d", path, l.Version, formatVersion)
	}
	if l.Servers == nil {
		l.Servers = map[string]Server{}
	}
	return &l, nil
}

// Update reads the lockfile, lets fn change it, and writes it back
// atomically, holding a lock (a file beside it) so that two processes
// updating at once each see the other's change. The file is only written
// when fn changed something.
func Update(path string, fn func(*Lock) error) error {
	unlock, err := acquire(path + ".lck")
	if err != nil {
		return err
	}
	defer unlock()
	l, err := Read(path)
	if err != nil {
		return err
	}
	before, _ := l.encode()
	if err := fn(l); err != nil {
		return err
	}
	after, err := l.encode()
	if err != nil {
		return err
	}
	if bytes.Equal(before, after) {
		return nil
	}
	return writeAtomic(path, after)
}

// encode is the file's bytes: indented, keys sorted, one definition per
// entry, so that a change to one tool is a small diff in review.
func (l *Lock) encode() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(l); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Keys returns the keys of one kind pinned for server, sorted.
func (s Server) Keys(kind Kind) []string {
	keys := make([]string, 0, len(s[kind]))
	for k := range s[kind] {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// writeAtomic writes data to path through a temporary file in the same
// directory and a rename: a reader never sees half a lockfile.
func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".mcptrunk.lock-*.tmp")
	if err != nil {
		return fmt.Errorf("writing the lockfile: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after a successful rename there is nothing to remove
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("writing the lockfile: %w", err)
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return fmt.Errorf("writing the lockfile: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing the lockfile: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("writing the lockfile: %w", err)
	}
	return nil
}

// Lock-file locking: an exclusive create of a file beside the lockfile.
// Portable (no flock), and a lock left by a process that died is taken over
// once it is older than staleLock.
const (
	staleLock   = 30 * time.Second
	lockTimeout = 20 * time.Second
)

func acquire(path string) (func(), error) {
	deadline := time.Now().Add(lockTimeout)
	for delay := 5 * time.Millisecond; ; delay = min(2*delay, 200*time.Millisecond) {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err == nil {
			f.Close()
			return func() { os.Remove(path) }, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("locking the lockfile: %w", err)
		}
		if st, serr := os.Stat(path); serr == nil && time.Since(st.ModTime()) > staleLock {
			os.Remove(path) // left by a process that died
			continue
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the lockfile is locked by another mcptrunk (%s); remove it if no mcptrunk pin or serve is running", path)
		}
		time.Sleep(delay)
	}
}
