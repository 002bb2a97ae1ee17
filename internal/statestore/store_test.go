package statestore

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/redisconn"
	"github.com/mcptrunk/mcptrunk/internal/testkit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// token is what the conformance test seals: its bytes must never be found
// at rest.
var token = []byte("tok_3b1f9c2e-the-secret-refresh-token")

func testKey(b byte) []byte { return bytes.Repeat([]byte{b}, KeySize) }

// backendCase is one implementation under the conformance test, with a
// way to read what it holds at rest.
type backendCase struct {
	name string
	open func(t *testing.T, now func() time.Time) Backend
	raw  func(t *testing.T, b Backend, name string) []byte // the bytes at rest
}

func backends(t *testing.T) []backendCase {
	return []backendCase{
		{name: "embedded", open: func(t *testing.T, now func() time.Time) Backend {
			e, err := OpenEmbedded(filepath.Join(t.TempDir(), "state", "state.db"), now)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { e.Close() })
			return e
		}, raw: func(t *testing.T, b Backend, _ string) []byte {
			// The whole file, as a thief of the disk would read it.
			e := b.(*Embedded)
			if err := e.db.Sync(); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(e.path)
			if err != nil {
				t.Fatal(err)
			}
			return data
		}},
		{name: "redis", open: func(t *testing.T, _ func() time.Time) Backend {
			srv := testkit.StartRedis(t, testkit.RedisOptions{})
			r, err := OpenRedis(srv.URL())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.Close() })
			return r
		}, raw: func(t *testing.T, b Backend, name string) []byte {
			v, err := redisconn.Bytes(b.(*Redis).Client().Do(context.Background(), "GET", RedisPrefix+name))
			if err != nil && !errors.Is(err, redisconn.ErrNil) {
				t.Fatal(err)
			}
			return v
		}},
	}
}

// TestConformance: each backend behind a Store gets, puts, overwrites,
// deletes and expires alike, and a sealed value is nowhere at rest in the
// clear while an unsealed one is read back as written.
func TestConformance(t *testing.T) {
	for _, bc := range backends(t) {
		t.Run(bc.name, func(t *testing.T) {
			clock := testkit.NewClock(time.Now())
			b := bc.open(t, clock.Now)
			keys, err := NewKeys(testKey(1), nil)
			if err != nil {
				t.Fatal(err)
			}
			s := New(b, keys, Options{Now: clock.Now})
			ctx := context.Background()

			if _, err := s.Get(ctx, "absent", false); !errors.Is(err, ErrNotFound) {
				t.Errorf("Get of a name never written: %v, want ErrNotFound", err)
			}
			if err := s.Put(ctx, "signin/a/alice", token, Put{Seal: true}); err != nil {
				t.Fatal(err)
			}
			if err := s.Put(ctx, "count/a", []byte("plain-counter-7"), Put{}); err != nil {
				t.Fatal(err)
			}
			if v, err := s.Get(ctx, "signin/a/alice", true); err != nil || !bytes.Equal(v, token) {
				t.Errorf("Get sealed = %q, %v; want the token back", v, err)
			}
			if v, err := s.Get(ctx, "count/a", false); err != nil || string(v) != "plain-counter-7" {
				t.Errorf("Get plain = %q, %v", v, err)
			}
			raw := bc.raw(t, b, "signin/a/alice")
			if len(raw) == 0 {
				t.Fatal("nothing at rest under the sealed name")
			}
			if bytes.Contains(raw, token) || bytes.Contains(raw, []byte("secret-refresh")) {
				t.Errorf("the token's bytes are at rest in the clear")
			}
			if !bytes.Contains(bc.raw(t, b, "count/a"), []byte("plain-counter-7")) {
				t.Errorf("an unsealed value is not at rest as written: the raw read sees nothing")
			}

			if err := s.Put(ctx, "signin/a/alice", []byte("second"), Put{Seal: true}); err != nil {
				t.Fatal(err)
			}
			if v, _ := s.Get(ctx, "signin/a/alice", true); string(v) != "second" {
				t.Errorf("after overwrite Get = %q, want second", v)
			}
			if err := s.Delete(ctx, "signin/a/alice"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Get(ctx, "signin/a/alice", true); !errors.Is(err, ErrNotFound) {
				t.Errorf("Get after Delete: %v, want ErrNotFound", err)
			}
			if err := s.Delete(ctx, "signin/a/alice"); err != nil {
				t.Errorf("Delete of an absent name: %v, want none", err)
			}

			// Expiry: the Store's clock for the embedded store; Redis
			// expires by its own clock, so its record is written to end
			// a moment from now and the test waits for Redis to drop it.
			if err := s.Put(ctx, "exp", []byte("v"), Put{Expires: clock.Now().Add(time.Minute), Seal: true}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Get(ctx, "exp", true); err != nil {
				t.Errorf("Get before expiry: %v", err)
			}
			clock.Add(time.Minute)
			if _, err := s.Get(ctx, "exp", true); !errors.Is(err, ErrNotFound) {
				t.Errorf("Get at expiry: %v, want ErrNotFound", err)
			}
			if err := s.Put(ctx, "gone", []byte("already-expired"), Put{Expires: clock.Now().Add(-time.Second)}); err != nil {
				t.Fatal(err)
			}
			if _, err := b.Get(ctx, "gone"); !errors.Is(err, ErrNotFound) {
				t.Errorf("a record written already expired is in the backend: %v", err)
			}
			if err := s.Health(ctx); err != nil || !s.Status().Up {
				t.Errorf("Health = %v, status %+v; want up", err, s.Status())
			}
		})
	}
}

// TestRedisExpiresByItself: a record with an expiry is given to Redis
// with it (PXAT), so that Redis drops it without the trunk.
func TestRedisExpiresByItself(t *testing.T) {
	srv := testkit.StartRedis(t, testkit.RedisOptions{})
	r, err := OpenRedis(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	s := New(r, nil, Options{})
	ctx := context.Background()
	exp := time.Now().Add(time.Hour)
	if err := s.Put(ctx, "x", []byte("v"), Put{Expires: exp}); err != nil {
		t.Fatal(err)
	}
	at, err := redisconn.Int64(r.Client().Do(ctx, "PEXPIRETIME", RedisPrefix+"x"))
	if err != nil {
		t.Fatal(err)
	}
	if d := time.UnixMilli(at).Sub(exp); d > time.Millisecond || d < -time.Millisecond {
		t.Errorf("Redis expires the record at %v, want %v", time.UnixMilli(at), exp)
	}
}

// TestSealedRecordBoundToItsName: a sealed record copied to another name
// (one subject's token given to another) fails to open.
func TestSealedRecordBoundToItsName(t *testing.T) {
	keys, _ := NewKeys(testKey(1), nil)
	m := NewMemory(nil)
	s := New(m, keys, Options{})
	ctx := context.Background()
	if err := s.Put(ctx, "signin/a/alice", token, Put{Seal: true}); err != nil {
		t.Fatal(err)
	}
	rec, _ := m.Get(ctx, "signin/a/alice")
	_ = m.Put(ctx, "signin/a/mallory", rec, time.Time{})
	if v, err := s.Get(ctx, "signin/a/mallory", true); err == nil || !strings.Contains(err.Error(), "moved from another name") {
		t.Errorf("a record moved to another name: %q, %v; want refused", v, err)
	}
}

// TestKeyRotation: with the old key as previousKeyFile, records sealed
// under it are read and sealed again under the new key; without it they
// cannot be read, and the error says which key they need.
func TestKeyRotation(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.db")
	oldFile, newFile := filepath.Join(dir, "old.key"), filepath.Join(dir, "new.key")
	writeKey(t, oldFile, "0101010101010101010101010101010101010101010101010101010101010101\n")
	writeKey(t, newFile, string(testKey(2))) // raw bytes
	ctx := context.Background()

	st := config.State{Configured: true, Path: path, KeyFile: oldFile}
	s, err := Open(st, "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	oldID := s.Info().KeyID
	if err := s.Put(ctx, "t", token, Put{Seal: true}); err != nil {
		t.Fatal(err)
	}
	s.Close()

	st.KeyFile, st.PreviousKeyFile = newFile, oldFile
	s, err = Open(st, "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Info().KeyID == oldID {
		t.Fatal("the new key has the old one's id")
	}
	if v, err := s.Get(ctx, "t", true); err != nil || !bytes.Equal(v, token) {
		t.Fatalf("a record sealed under the previous key: %q, %v", v, err)
	}
	s.Close()

	// Read once, it was sealed again: the new key alone reads it.
	st.PreviousKeyFile = ""
	s, err = Open(st, "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := s.Get(ctx, "t", true); err != nil || !bytes.Equal(v, token) {
		t.Errorf("after its read under rotation, the new key alone: %q, %v", v, err)
	}
	if err := s.Put(ctx, "u", token, Put{Seal: true}); err != nil {
		t.Fatal(err)
	}
	s.Close()

	// The old key alone cannot read what the new one sealed.
	st.KeyFile = oldFile
	s, err = Open(st, "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Get(ctx, "u", true); err == nil || !strings.Contains(err.Error(), "key id "+keyID(t, testKey(2))) {
		t.Errorf("a record under a key not given: %v, want an error naming its key id", err)
	}
}

// TestNewKeysRefusesTheSameKeyTwice: as LoadKeys does for the files.
func TestNewKeysRefusesTheSameKeyTwice(t *testing.T) {
	if _, err := NewKeys(testKey(1), testKey(1)); err == nil {
		t.Error("NewKeys with previous == current: no error")
	}
}

func keyID(t *testing.T, raw []byte) string {
	k, err := NewKeys(raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	return k.ID()
}

func writeKey(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestOpenErrors: each mistake in trunk.state is an error naming its
// field, never quoting a key or a password.
func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	short := filepath.Join(dir, "short.key")
	writeKey(t, short, "abcd")
	garbage := filepath.Join(dir, "garbage.key")
	writeKey(t, garbage, "not a key at all, no")
	good := filepath.Join(dir, "good.key")
	writeKey(t, good, strings.Repeat("ab", KeySize))
	for _, c := range []struct {
		st   config.State
		want string
	}{
		{config.State{KeyFile: filepath.Join(dir, "missing.key")}, "trunk.state.keyFile: open " + filepath.Join(dir, "missing.key") + ": no such file"},
		{config.State{KeyFile: short}, "trunk.state.keyFile: " + short + ": holds a key of 2 bytes, want 32"},
		{config.State{KeyFile: garbage}, "trunk.state.keyFile: " + garbage + ": holds neither hex, base64 nor 32 raw bytes"},
		{config.State{KeyFile: good, PreviousKeyFile: short}, "trunk.state.previousKeyFile: " + short + ": holds a key of 2 bytes"},
		{config.State{KeyFile: good, PreviousKeyFile: good}, "trunk.state.previousKeyFile: " + good + " holds the same key as keyFile"},
		{config.State{URL: "redis://:pw-secret@127.0.0.1:1/notanumber"}, "trunk.state.url: not a usable Redis URL"},
		{config.State{Path: filepath.Join(short, "db")}, "trunk.state.path: "},
	} {
		c.st.Configured = true
		c.st.Path = cmpOr(c.st.Path, filepath.Join(dir, "s.db"))
		if c.st.URL != "" {
			c.st.Path = ""
		}
		s, err := Open(c.st, "", Options{})
		if err == nil {
			s.Close()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want it to say %q", c.st, err, c.want)
		}
		if err != nil && (strings.Contains(err.Error(), "pw-secret") || strings.Contains(err.Error(), strings.Repeat("ab", 8))) {
			t.Errorf("the error quotes a secret: %v", err)
		}
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// TestEmbeddedOneProcess: a second open of the same file fails naming
// the field and saying what to do, rather than waiting for ever.
func TestEmbeddedOneProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	e, err := OpenEmbedded(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	// A second handle takes the same file lock another process would.
	_, err = OpenEmbedded(path, nil)
	if err == nil || !strings.Contains(err.Error(), "trunk.state.path: "+path+" is open in another process") {
		t.Errorf("second open: %v", err)
	}
}

// TestSealedWithoutKey: a sealed write to a store at rest without a key
// is refused; memory, which nothing else reads, takes it.
func TestSealedWithoutKey(t *testing.T) {
	ctx := context.Background()
	s, err := Open(config.State{Configured: true, Path: filepath.Join(t.TempDir(), "s.db")}, "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Put(ctx, "t", token, Put{Seal: true}); !errors.Is(err, ErrNoKey) {
		t.Errorf("sealed Put without a key: %v, want ErrNoKey", err)
	}
	if s.CanSeal() {
		t.Error("CanSeal without a key on disk")
	}
	m, _ := Open(config.State{}, "", Options{})
	if err := m.Put(ctx, "t", token, Put{Seal: true}); err != nil || !m.CanSeal() || m.Info().Kind != "memory" {
		t.Errorf("memory: Put %v, CanSeal %v, kind %q", err, m.CanSeal(), m.Info().Kind)
	}
}

// TestRedisDownAndBack: while Redis is stopped every operation fails at
// once as UnavailableError and Status says down; once it is back (with
// its append-only file) the store answers again, holding what was
// written before.
func TestRedisDownAndBack(t *testing.T) {
	srv := testkit.StartRedis(t, testkit.RedisOptions{Persist: true})
	keys, _ := NewKeys(testKey(1), nil)
	r, err := OpenRedis(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	s := New(r, keys, Options{})
	defer s.Close()
	ctx := context.Background()
	if err := s.Put(ctx, "t", token, Put{Seal: true}); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	start := time.Now()
	_, err = s.Get(ctx, "t", true)
	var ue *UnavailableError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "the state store (redis, trunk.state) is unavailable") {
		t.Errorf("Get with Redis stopped: %v, want UnavailableError", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Get with Redis stopped took %v", d)
	}
	if st := s.Status(); st.Up || st.Error == "" {
		t.Errorf("status with Redis stopped: %+v, want down with why", st)
	}
	if err := s.Health(ctx); err == nil {
		t.Error("Health with Redis stopped: nil")
	}
	srv.Start()
	if err := s.Health(ctx); err != nil {
		t.Fatalf("Health with Redis back: %v", err)
	}
	if v, err := s.Get(ctx, "t", true); err != nil || !bytes.Equal(v, token) {
		t.Errorf("after Redis came back: %q, %v; want what was written before", v, err)
	}
	if st := s.Status(); !st.Up || st.Error != "" {
		t.Errorf("status with Redis back: %+v, want up", st)
	}
}

// TestUnsealedRecordRefused: whoever can write to a shared backend
// cannot plant a value where a sealed one is read: a record written in
// the clear (by a store without the key, as another program would) is
// refused by a reader expecting it sealed, and a sealed one by a reader
// expecting it plain.
func TestUnsealedRecordRefused(t *testing.T) {
	ctx := context.Background()
	keys, _ := NewKeys(testKey(1), nil)
	for _, b := range []Backend{NewMemory(nil), func() Backend {
		e, err := OpenEmbedded(filepath.Join(t.TempDir(), "s.db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		return e
	}()} {
		s, planter := New(b, keys, Options{}), New(b, nil, Options{})
		if err := planter.Put(ctx, "signin/a/alice", []byte(`{"planted":true}`), Put{}); err != nil {
			t.Fatal(err)
		}
		if v, err := s.Get(ctx, "signin/a/alice", true); !errors.Is(err, ErrSealMismatch) {
			t.Errorf("%s: a planted plain record read as sealed: %q, %v; want ErrSealMismatch", b.Kind(), v, err)
		}
		if _, mem := b.(*Memory); mem {
			// memory without a key: below.
		} else if v, err := planter.Get(ctx, "signin/a/alice", true); !errors.Is(err, ErrSealMismatch) {
			t.Errorf("%s without a key: a plain record read as sealed: %q, %v; want ErrSealMismatch", b.Kind(), v, err)
		}
		if err := s.Put(ctx, "t", token, Put{Seal: true}); err != nil {
			t.Fatal(err)
		}
		if v, err := s.Get(ctx, "t", false); !errors.Is(err, ErrSealMismatch) {
			t.Errorf("%s: a sealed record read as plain: %q, %v; want ErrSealMismatch", b.Kind(), v, err)
		}
	}
	// Memory without a key holds sealed values in the clear: nothing
	// else reads it.
	m := New(NewMemory(nil), nil, Options{})
	if err := m.Put(ctx, "t", token, Put{Seal: true}); err != nil {
		t.Fatal(err)
	}
	if v, err := m.Get(ctx, "t", true); err != nil || !bytes.Equal(v, token) {
		t.Errorf("memory without a key: %q, %v; want the value back", v, err)
	}
}

// waiting is a backend that answers nothing until its caller gives up, as
// a Redis client does for a cancelled context.
type waiting struct{ *Memory }

func (waiting) Get(ctx context.Context, _ string) ([]byte, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestCallerGaveUpIsNotStoreDown: an operation whose caller cancelled it,
// or whose caller's deadline passed, fails with the caller's error and
// leaves Status up: a host hanging up is not the store going away.
func TestCallerGaveUpIsNotStoreDown(t *testing.T) {
	s := New(waiting{NewMemory(nil)}, nil, Options{})
	since := s.Status().Since
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := s.Get(ctx, "t", true)
	var ue *UnavailableError
	if !errors.Is(err, context.Canceled) || errors.As(err, &ue) {
		t.Errorf("Get cancelled by its caller: %v, want context.Canceled and no UnavailableError", err)
	}
	dctx, dcancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer dcancel()
	if _, err := s.Get(dctx, "t", true); !errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ue) {
		t.Errorf("Get past its caller's deadline: %v, want context.DeadlineExceeded and no UnavailableError", err)
	}
	if st := s.Status(); !st.Up || !st.Since.Equal(since) {
		t.Errorf("status after callers gave up: %+v; want up since the start", st)
	}
}

// racing is a backend on which another writer acts right after each Get
// has read: what a replica does between this one's read and its write.
type racing struct {
	Backend
	afterGet func()
}

func (r *racing) Get(ctx context.Context, name string) ([]byte, error) {
	rec, err := r.Backend.Get(ctx, name)
	if f := r.afterGet; f != nil {
		r.afterGet = nil
		f()
	}
	return rec, err
}

// allBackends is memory and the stored backends of the conformance test.
func allBackends(t *testing.T) []backendCase {
	return append([]backendCase{{name: "memory", open: func(_ *testing.T, now func() time.Time) Backend { return NewMemory(now) }}}, backends(t)...)
}

// TestResealKeepsANewerWrite: a record read under the previous key is
// sealed again under the current one only if it is still the record read:
// a value another replica wrote meanwhile (a refreshed grant, its refresh
// token rotated) is kept.
func TestResealKeepsANewerWrite(t *testing.T) {
	ctx := context.Background()
	oldKeys, _ := NewKeys(testKey(1), nil)
	rotated, _ := NewKeys(testKey(2), testKey(1))
	for _, bc := range allBackends(t) {
		t.Run(bc.name, func(t *testing.T) {
			b := bc.open(t, nil)
			if err := New(b, oldKeys, Options{}).Put(ctx, "g", []byte("old-grant"), Put{Seal: true}); err != nil {
				t.Fatal(err)
			}
			other := New(b, rotated, Options{})
			rb := &racing{Backend: b}
			rb.afterGet = func() {
				if err := other.Put(ctx, "g", []byte("refreshed-grant"), Put{Seal: true}); err != nil {
					t.Error(err)
				}
			}
			s := New(rb, rotated, Options{})
			if v, err := s.Get(ctx, "g", true); err != nil || string(v) != "old-grant" {
				t.Fatalf("Get under rotation = %q, %v", v, err)
			}
			if v, err := other.Get(ctx, "g", true); err != nil || string(v) != "refreshed-grant" {
				t.Errorf("after the re-seal: %q, %v; want the value written meanwhile", v, err)
			}
			// With no write meanwhile, the re-seal happens: the new key
			// alone reads it.
			if err := New(b, oldKeys, Options{}).Put(ctx, "h", []byte("kept"), Put{Seal: true}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Get(ctx, "h", true); err != nil {
				t.Fatal(err)
			}
			newOnly, _ := NewKeys(testKey(2), nil)
			if v, err := New(b, newOnly, Options{}).Get(ctx, "h", true); err != nil || string(v) != "kept" {
				t.Errorf("after a re-seal with nothing in between, the new key alone: %q, %v", v, err)
			}
		})
	}
}

// TestTakeOnce: of many takers of one record at once, exactly one gets
// it; a taken record is gone.
func TestTakeOnce(t *testing.T) {
	ctx := context.Background()
	keys, _ := NewKeys(testKey(1), nil)
	for _, bc := range allBackends(t) {
		t.Run(bc.name, func(t *testing.T) {
			s := New(bc.open(t, nil), keys, Options{})
			if err := s.Put(ctx, "flow", token, Put{Seal: true, Expires: time.Now().Add(time.Hour)}); err != nil {
				t.Fatal(err)
			}
			const takers = 8
			got := make(chan error, takers)
			for range takers {
				go func() {
					v, err := s.Take(ctx, "flow", true)
					if err == nil && !bytes.Equal(v, token) {
						err = errors.New("taken with another value")
					}
					got <- err
				}()
			}
			won := 0
			for range takers {
				switch err := <-got; {
				case err == nil:
					won++
				case !errors.Is(err, ErrNotFound):
					t.Errorf("Take: %v", err)
				}
			}
			if won != 1 {
				t.Errorf("%d takers got the record, want 1", won)
			}
			if _, err := s.Get(ctx, "flow", true); !errors.Is(err, ErrNotFound) {
				t.Errorf("Get after Take: %v, want ErrNotFound", err)
			}
		})
	}
}
