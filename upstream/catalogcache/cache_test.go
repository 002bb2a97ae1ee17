package catalogcache

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
)

func sample() *Entry {
	return &Entry{
		StoredAt:        time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		ProtocolVersion: "2025-11-25",
		Capabilities:    json.RawMessage(`{ "tools" : {"listChanged":true} }`),
		ServerInfo:      json.RawMessage(`{"name":"s","x":"<&>"}`),
		Instructions:    "Use it.\nCarefully.",
		Tools: []json.RawMessage{
			json.RawMessage(`{"name":"a","description":"<b> & \"q\" \u00e9","inputSchema":{"type":"object"}, "x": [1, 2.50, null]}`),
			json.RawMessage("{\n  \"name\": \"b\"\n}"),
		},
		Prompts:   []json.RawMessage{json.RawMessage(`{"name":"p"}`)},
		Resources: nil,
		Templates: []json.RawMessage{json.RawMessage(`{"uriTemplate":"db://{t}","name":"db"}`)},
	}
}

// What is stored comes back byte for byte, in a 0600 file.
func TestRoundTrip(t *testing.T) {
	s := Open(filepath.Join(t.TempDir(), "cache"))
	want := sample()
	if err := s.Save("srv", "k1", want); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load("srv", "k1")
	if err != nil {
		t.Fatal(err)
	}
	if !got.StoredAt.Equal(want.StoredAt) || got.ProtocolVersion != want.ProtocolVersion || got.Instructions != want.Instructions ||
		!bytes.Equal(got.Capabilities, want.Capabilities) || !bytes.Equal(got.ServerInfo, want.ServerInfo) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	for i, pair := range [][2][]json.RawMessage{{got.Tools, want.Tools}, {got.Prompts, want.Prompts}, {got.Resources, want.Resources}, {got.Templates, want.Templates}} {
		if len(pair[0]) != len(pair[1]) {
			t.Fatalf("list %d: %d items, want %d", i, len(pair[0]), len(pair[1]))
		}
		for j := range pair[0] {
			if !bytes.Equal(pair[0][j], pair[1][j]) {
				t.Errorf("list %d item %d: %s, want %s", i, j, pair[0][j], pair[1][j])
			}
		}
	}
	if got.Digest() != want.Digest() {
		t.Error("the digest of what came back differs")
	}
	if runtime.GOOS != "windows" {
		fi, err := os.Stat(s.path("srv", "k1"))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("mode %v, want 0600", fi.Mode().Perm())
		}
	}
}

// No entry is a miss; a file that cannot be read as one is corrupt.
func TestMissAndCorrupt(t *testing.T) {
	dir := t.TempDir()
	s := Open(dir)
	if _, err := s.Load("srv", "k1"); !IsMiss(err) {
		t.Errorf("empty cache: %v, want a miss", err)
	}
	if err := s.Save("srv", "k1", sample()); err != nil {
		t.Fatal(err)
	}
	p := s.path("srv", "k1")
	data, _ := os.ReadFile(p)
	for name, content := range map[string]string{
		"truncated":    string(data[:len(data)/2]),
		"not JSON":     "garbage",
		"other format": strings.Replace(string(data), `"format":1`, `"format":99`, 1),
		"other key":    strings.Replace(string(data), `"key":"k1"`, `"key":"k2"`, 1),
	} {
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Load("srv", "k1"); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
}

// The key changes with every value that changes the server, secrets
// included, but neither the file's name nor its content holds a secret.
func TestKeyAndNoSecrets(t *testing.T) {
	base := config.Spec{Name: "s", Type: config.TransportStdio, Command: "srv", Args: []string{"a"},
		Env: map[string]string{"TOKEN": "s3cr3t-env"}, Headers: map[string]string{"Authorization": "Bearer s3cr3t-hdr"}}
	k := Key(base)
	for name, change := range map[string]func(*config.Spec){
		"command":  func(s *config.Spec) { s.Command = "other" },
		"args":     func(s *config.Spec) { s.Args = []string{"b"} },
		"env":      func(s *config.Spec) { s.Env = map[string]string{"TOKEN": "rotated"} },
		"cwd":      func(s *config.Spec) { s.Cwd = "/tmp" },
		"url":      func(s *config.Spec) { s.URL = "http://x" },
		"header":   func(s *config.Spec) { s.Headers = map[string]string{"Authorization": "Bearer rotated"} },
		"protocol": func(s *config.Spec) { s.ProtocolVersion = "2025-11-25" },
	} {
		s := base
		change(&s)
		if Key(s) == k {
			t.Errorf("a change of %s keeps the key", name)
		}
	}
	same := base
	same.Tools = config.Filter{Deny: []string{"x"}}
	same.Timeouts.Call = config.Duration(time.Second)
	same.Lazy = true
	if Key(same) != k {
		t.Error("filters, timeouts or lazy change the key")
	}
	if Key(base, "2025") == k {
		t.Error("extra does not change the key")
	}
	dir := t.TempDir()
	st := Open(dir)
	if err := st.Save("s", k, sample()); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	for _, de := range entries {
		data, _ := os.ReadFile(filepath.Join(dir, de.Name()))
		for _, secret := range []string{"s3cr3t"} {
			if strings.Contains(de.Name(), secret) || bytes.Contains(data, []byte(secret)) {
				t.Errorf("%s holds a secret", de.Name())
			}
		}
	}
}

// Saving a server's entry for a new spec removes its old one, and no
// other server's.
func TestSaveRemovesStale(t *testing.T) {
	dir := t.TempDir()
	s := Open(dir)
	for _, sk := range [][2]string{{"a", "old"}, {"a-b", "x"}, {"a", "new"}} {
		if err := s.Save(sk[0], sk[1], sample()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Load("a", "old"); !IsMiss(err) {
		t.Errorf("a's old entry: %v, want gone", err)
	}
	for _, sk := range [][2]string{{"a-b", "x"}, {"a", "new"}} {
		if _, err := s.Load(sk[0], sk[1]); err != nil {
			t.Errorf("%s: %v", sk, err)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("%d files left, want 2 (no temporary ones)", len(entries))
	}
}

// A directory that cannot be written is an error, not a panic or a
// partial file.
func TestUnwritable(t *testing.T) {
	parent := t.TempDir()
	blocker := filepath.Join(parent, "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s := Open(filepath.Join(blocker, "cache")) // under a regular file
	if err := s.Save("srv", "k", sample()); err == nil {
		t.Error("saving under a file succeeded")
	}
}

func TestDefaultDir(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", dir)
	got, err := DefaultDir()
	if err != nil || got != filepath.Join(dir, "mcptrunk") {
		t.Errorf("DefaultDir() = %q, %v", got, err)
	}
	t.Setenv("XDG_CACHE_HOME", "relative")
	if got, _ := DefaultDir(); strings.HasPrefix(got, "relative") {
		t.Errorf("a relative XDG_CACHE_HOME was used: %q", got)
	}
}
