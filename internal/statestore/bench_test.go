package statestore

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/testkit"
)

// grantSized is about what a sign-in's grant weighs (a JWT access token,
// a refresh token, the client and endpoints).
var grantSized = make([]byte, 1500)

// A benchBackend opens one backend for a benchmark, closed at its end.
type benchBackend struct {
	name string
	open func(b *testing.B) Backend
}

// storedBackends are the backends that keep records outside the process.
var storedBackends = []benchBackend{
	{"embedded", func(b *testing.B) Backend {
		e, err := OpenEmbedded(filepath.Join(b.TempDir(), "s.db"), nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { e.Close() })
		return e
	}},
	{"redis", func(b *testing.B) Backend {
		r, err := OpenRedis(testkit.StartRedis(b, testkit.RedisOptions{}).URL())
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { r.Close() })
		return r
	}},
}

// BenchmarkGetSealed is what reading a caller's sign-in adds to a call
// (one read and an AES-GCM open), per backend.
func BenchmarkGetSealed(b *testing.B) {
	keys, _ := NewKeys(testKey(9), nil)
	for _, bc := range append([]benchBackend{{"memory", func(*testing.B) Backend { return NewMemory(nil) }}}, storedBackends...) {
		b.Run(bc.name, func(b *testing.B) {
			s := New(bc.open(b), keys, Options{})
			ctx := context.Background()
			if err := s.Put(ctx, "signin/x/y", grantSized, Put{Seal: true, Expires: time.Now().Add(time.Hour)}); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := s.Get(ctx, "signin/x/y", true); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPutSealed is what keeping a sign-in or a refreshed token costs.
func BenchmarkPutSealed(b *testing.B) {
	keys, _ := NewKeys(testKey(9), nil)
	for _, bc := range storedBackends {
		b.Run(bc.name, func(b *testing.B) {
			s := New(bc.open(b), keys, Options{})
			ctx := context.Background()
			for b.Loop() {
				if err := s.Put(ctx, "signin/x/y", grantSized, Put{Seal: true, Expires: time.Now().Add(time.Hour)}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
