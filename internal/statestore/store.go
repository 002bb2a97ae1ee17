package statestore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
)

// Store is keys and values with an expiry over a Backend, sealing the
// values its caller asks to seal, and remembering whether the backend
// answered. Safe for concurrent use.
type Store struct {
	b    Backend
	keys *Keys // nil: nothing can be sealed (memory needs no sealing)
	opts Options

	mu     sync.Mutex
	status Status
}

// Options tune a Store; the zero value works.
type Options struct {
	Logger *slog.Logger     // names and errors only, never a value
	Now    func() time.Time // time.Now when nil
}

// Status is whether the backend answered its last operation or ping.
type Status struct {
	Up    bool
	Since time.Time // when it last changed (the open's time at first)
	Error string    // why it is down; never a value or a password
}

// Info is what the store is, fit to show (mcptrunk check, status).
type Info struct {
	Kind   string // "memory", "embedded", "redis"
	Where  string // the file, or the URL without its password
	Sealed bool   // it has a key: it can hold tokens
	KeyID  string // the current key's id, when Sealed
}

// Put says how a value is written.
type Put struct {
	// Expires is when the record goes (zero: never): a token's own
	// expiry, so the store never keeps one longer than it is good.
	Expires time.Time
	// Seal writes the value sealed under the current key: a token or
	// anything else secret. Without a key it is refused (ErrNoKey), except
	// in memory, which nothing else reads.
	Seal bool
}

// ErrNoKey refuses a sealed write to a store on disk or in Redis that has
// no trunk.state.keyFile.
var ErrNoKey = errors.New("trunk.state.keyFile is not set: tokens are not written to the store unsealed")

// UnavailableError is an operation the backend did not answer.
type UnavailableError struct {
	Kind string
	Err  error
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("the state store (%s, trunk.state) is unavailable: %v", e.Kind, e.Err)
}

func (e *UnavailableError) Unwrap() error { return e.Err }

// New returns a Store over b; keys may be nil (then nothing is sealed,
// and a sealed Put is refused unless b is Memory).
func New(b Backend, keys *Keys, opts Options) *Store {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Store{b: b, keys: keys, opts: opts, status: Status{Up: true, Since: opts.Now()}}
}

// Open opens the store trunk.state describes: Redis with url, else the
// embedded file at path (defaultPath when path is ""), with the key files
// read. An unconfigured state is Memory. Errors name the field.
func Open(st config.State, defaultPath string, opts Options) (*Store, error) {
	if !st.Configured {
		return New(NewMemory(opts.Now), nil, opts), nil
	}
	var keys *Keys
	if st.KeyFile != "" {
		var err error
		if keys, err = LoadKeys(st.KeyFile, st.PreviousKeyFile); err != nil {
			return nil, err
		}
	}
	var b Backend
	var err error
	switch {
	case st.URL != "":
		b, err = OpenRedis(st.URL)
	default:
		p := st.Path
		if p == "" {
			p = defaultPath
		}
		if p == "" {
			return nil, errors.New("trunk.state.path: not set, and the user's state directory could not be found")
		}
		b, err = OpenEmbedded(p, opts.Now)
	}
	if err != nil {
		return nil, err
	}
	return New(b, keys, opts), nil
}

// Info describes the store.
func (s *Store) Info() Info {
	i := Info{Kind: s.b.Kind(), Where: s.b.Where(), Sealed: s.keys != nil}
	if s.keys != nil {
		i.KeyID = s.keys.ID()
	}
	return i
}

// Backend is the store's backend (the Redis client for atomic counts:
// see Redis.Client).
func (s *Store) Backend() Backend { return s.b }

// CanSeal reports whether sealed values can be written: a key, or memory.
func (s *Store) CanSeal() bool {
	_, mem := s.b.(*Memory)
	return s.keys != nil || mem
}

// Status is whether the backend answered last.
func (s *Store) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status
}

// Health asks the backend now, and records the answer in Status.
func (s *Store) Health(ctx context.Context) error {
	return s.observe(ctx, s.b.Ping(ctx))
}

// Watch asks the backend every period until ctx is done, so that Status
// notices a store that went away or came back without waiting for a
// request to need it.
func (s *Store) Watch(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		pctx, cancel := context.WithTimeout(ctx, every)
		err := s.b.Ping(pctx)
		cancel()
		if ctx.Err() != nil {
			return // stopped: a ping cut short says nothing of the store
		}
		_ = s.record(err) // a ping past the period is the store not answering
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// observe records whether the backend answered (err is nil or
// ErrNotFound) and passes err on, as an UnavailableError when it did not.
// An operation its caller gave up (ctx cancelled or past its deadline)
// says nothing of the store: its error is passed on as it is, and Status
// is left alone.
func (s *Store) observe(ctx context.Context, err error) error {
	if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return err
	}
	return s.record(err)
}

// record is observe for an error that is the store's.
func (s *Store) record(err error) error {
	up := err == nil || errors.Is(err, ErrNotFound)
	s.mu.Lock()
	changed := s.status.Up != up
	if changed {
		s.status = Status{Up: up, Since: s.opts.Now()}
		if !up {
			s.status.Error = err.Error()
		}
	}
	s.mu.Unlock()
	if changed {
		if up {
			s.opts.Logger.Info("the state store answers again", "store", s.b.Kind())
		} else {
			s.opts.Logger.Warn("the state store does not answer", "store", s.b.Kind(), "error", err)
		}
	}
	if up {
		return err
	}
	return &UnavailableError{Kind: s.b.Kind(), Err: err}
}

// Header of every record: version, flags, expiry (Unix ms, 0 for none).
const (
	recordVersion = 1
	flagSealed    = 1
	headerLen     = 2 + 8
)

// ErrSealMismatch refuses a record that is not as its reader expects it:
// unsealed where a sealed one is read (another program wrote it to the
// shared store: a planted grant or flow), or sealed where a plain one is.
var ErrSealMismatch = errors.New("is not sealed as this trunk wrote it: refused")

// Get returns the value under name, unsealed; ErrNotFound when there is
// none (or it expired), an *UnavailableError when the backend did not
// answer. sealed is what the caller wrote (Put.Seal): a record that is
// not so is refused (ErrSealMismatch), so that whoever can write to the
// backend cannot plant a value where a sealed one is read. A record
// sealed under the previous key is sealed again under the current one.
func (s *Store) Get(ctx context.Context, name string, sealed bool) ([]byte, error) {
	rec, err := s.b.Get(ctx, name)
	if err = s.observe(ctx, err); err != nil {
		return nil, err
	}
	value, expires, stale, err := s.open(name, rec, sealed)
	if err != nil {
		return nil, err
	}
	if stale {
		s.reseal(ctx, name, rec, value, expires)
	}
	return value, nil
}

// reseal writes value, read from rec under the previous key, sealed again
// under the current one, only if name still holds rec: a value another
// replica wrote since (a refreshed grant) is never undone.
func (s *Store) reseal(ctx context.Context, name string, rec, value []byte, expires time.Time) {
	next, err := s.encode(name, value, Put{Expires: expires, Seal: true})
	if err == nil {
		var swapped bool
		swapped, err = s.b.Swap(ctx, name, rec, next, expires)
		if err = s.observe(ctx, err); err == nil {
			s.opts.Logger.Debug("record sealed again under the current key", "name", name, "written", swapped)
			return
		}
	}
	s.opts.Logger.Warn("sealing a record again under the current key failed", "name", name, "error", err)
}

// Take returns the value under name, as Get does, and deletes it in the
// same step: of replicas taking it at once one gets it, the others
// ErrNotFound. An *UnavailableError when the backend did not answer,
// which is not the value being gone.
func (s *Store) Take(ctx context.Context, name string, sealed bool) ([]byte, error) {
	rec, err := s.b.Take(ctx, name)
	if err = s.observe(ctx, err); err != nil {
		return nil, err
	}
	value, _, _, err := s.open(name, rec, sealed)
	return value, err
}

// open reads rec, the record under name: its value, its expiry, and
// whether it was sealed under the previous key. ErrNotFound when it
// expired; ErrSealMismatch when it is not sealed as sealed says.
func (s *Store) open(name string, rec []byte, sealed bool) (value []byte, expires time.Time, stale bool, err error) {
	if len(rec) < headerLen || rec[0] != recordVersion {
		return nil, time.Time{}, false, fmt.Errorf("state store: record %q is not one this trunk wrote", name)
	}
	expires = fromMillis(binary.BigEndian.Uint64(rec[2:headerLen]))
	if expired(expires, s.opts.Now()) {
		return nil, time.Time{}, false, ErrNotFound
	}
	isSealed := rec[1]&flagSealed != 0
	// A sealed Put writes memory without a key in the clear: nothing else
	// reads it. Anywhere else a sealed value is in the clear only if
	// someone other than this trunk wrote it.
	_, mem := s.b.(*Memory)
	plainSealed := s.keys == nil && mem
	if isSealed != sealed && !(sealed && !isSealed && plainSealed) {
		s.opts.Logger.Warn("a record in the state store is not sealed as expected; refused", "name", name, "sealed", isSealed)
		return nil, time.Time{}, false, fmt.Errorf("state store: record %q %w", name, ErrSealMismatch)
	}
	if !isSealed {
		return rec[headerLen:], expires, false, nil
	}
	value, stale, err = s.keys.open(rec[headerLen:], additional(name, rec[:headerLen]))
	if err != nil {
		return nil, time.Time{}, false, fmt.Errorf("state store: record %q: %w", name, err)
	}
	return value, expires, stale, nil
}

// Put writes value under name.
func (s *Store) Put(ctx context.Context, name string, value []byte, p Put) error {
	if !p.Expires.IsZero() && expired(p.Expires, s.opts.Now()) {
		return s.Delete(ctx, name)
	}
	rec, err := s.encode(name, value, p)
	if err != nil {
		return err
	}
	return s.observe(ctx, s.b.Put(ctx, name, rec, p.Expires))
}

// encode is value as a record under name: header, then the value, sealed
// if p says so.
func (s *Store) encode(name string, value []byte, p Put) ([]byte, error) {
	header := make([]byte, headerLen)
	header[0] = recordVersion
	binary.BigEndian.PutUint64(header[2:], toMillis(p.Expires))
	var rec []byte
	switch {
	case p.Seal && s.keys != nil:
		header[1] = flagSealed
		rec = append(header, s.keys.seal(value, additional(name, header))...)
	case p.Seal && !s.CanSeal():
		return nil, ErrNoKey
	default:
		rec = append(header, value...)
	}
	return rec, nil
}

// Delete removes name.
func (s *Store) Delete(ctx context.Context, name string) error {
	return s.observe(ctx, s.b.Delete(ctx, name))
}

// Close closes the backend.
func (s *Store) Close() error { return s.b.Close() }

// additional is a sealed record's additional data: its name and header,
// so that it cannot be moved to another name or given another expiry.
func additional(name string, header []byte) []byte {
	return append(append([]byte(name), 0), header...)
}

func toMillis(t time.Time) uint64 {
	if t.IsZero() {
		return 0
	}
	return uint64(t.UnixMilli())
}

func fromMillis(n uint64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.UnixMilli(int64(n))
}
