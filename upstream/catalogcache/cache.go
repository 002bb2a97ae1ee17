// Package catalogcache keeps, on disk, what each upstream server offered the
// last time it was discovered: its four lists exactly as it sent them, and
// what it said about itself (revision, capabilities, serverInfo,
// instructions). A lazy server is listed from its entry without being
// started. The package knows nothing of the servers' lifecycle: the upstream
// Client loads and stores entries, and decides what a miss means.
//
// One file per server, named by the server's id and a hash of its spec
// (command, args, env, cwd, url, headers, pinned revision). The hash covers
// env and header values, so a changed secret is a changed spec, but neither
// the file's name nor its content holds a value of either. Files are written
// to a temporary name and renamed, mode 0600, in a 0700 directory.
package catalogcache

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
)

// format is the version of the file layout; a file of another is a miss.
const format = 1

// ErrCorrupt marks an entry that exists but cannot be used (truncated,
// edited, another spec's): the caller warns and treats it as a miss.
var ErrCorrupt = errors.New("catalog cache entry is unusable")

// Entry is one server's catalog as last discovered. Every json.RawMessage
// holds the server's own bytes.
type Entry struct {
	StoredAt        time.Time
	ProtocolVersion string
	Capabilities    json.RawMessage
	ServerInfo      json.RawMessage
	Instructions    string
	// Tools, Prompts, Resources, Templates: each item as the server listed
	// it, in its order.
	Tools, Prompts, Resources, Templates []json.RawMessage
}

// Digest identifies an entry's content (everything but StoredAt), so that
// a rediscovery that found the same catalog does not rewrite the file.
func (e *Entry) Digest() [sha256.Size]byte {
	h := sha256.New()
	write := func(b []byte) {
		fmt.Fprintf(h, "%d:", len(b))
		h.Write(b)
	}
	write([]byte(e.ProtocolVersion))
	write(e.Capabilities)
	write(e.ServerInfo)
	write([]byte(e.Instructions))
	for _, list := range [][]json.RawMessage{e.Tools, e.Prompts, e.Resources, e.Templates} {
		fmt.Fprintf(h, "[%d]", len(list))
		for _, it := range list {
			write(it)
		}
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

// DefaultDir is where the cache lives: $XDG_CACHE_HOME/mcptrunk when
// XDG_CACHE_HOME is an absolute path (on every platform, so a test or a
// user can move it), else os.UserCacheDir()/mcptrunk (~/.cache on Linux,
// ~/Library/Caches on macOS, %LocalAppData% on Windows).
func DefaultDir() (string, error) {
	if x := os.Getenv("XDG_CACHE_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "mcptrunk"), nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("finding the cache directory: %w", err)
	}
	return filepath.Join(base, "mcptrunk"), nil
}

// Key is the hash of what makes a server the server it is: anything that
// could change what it lists. Filters and timeouts are not in it (they act
// on the trunk's side); extra adds what the caller's own choices change
// (which revision is preferred, say).
func Key(spec config.Spec, extra ...string) string {
	type kv struct{ K, V string }
	pairs := func(m map[string]string) []kv {
		out := make([]kv, 0, len(m))
		for k, v := range m {
			out = append(out, kv{k, v})
		}
		slices.SortFunc(out, func(a, b kv) int { return strings.Compare(a.K, b.K) })
		return out
	}
	b, _ := json.Marshal(struct {
		Type     config.Transport
		Command  string
		Args     []string
		Env      []kv
		Cwd      string
		URL      string
		Headers  []kv
		Protocol string
		Extra    []string
	}{spec.Type, spec.Command, spec.Args, pairs(spec.Env), spec.Cwd, spec.URL, pairs(spec.Headers), spec.ProtocolVersion, extra})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Store is a cache directory.
type Store struct{ dir string }

// Open returns the cache in dir, which is created when first written.
func Open(dir string) *Store { return &Store{dir: dir} }

// Dir is the store's directory.
func (s *Store) Dir() string { return s.dir }

func (s *Store) path(server, key string) string {
	return filepath.Join(s.dir, fileName(server, key))
}

func fileName(server, key string) string {
	if len(key) > 32 {
		key = key[:32]
	}
	return server + "." + key + ".json"
}

// file is an entry on disk. Items, capabilities and serverInfo are raw, so
// they come back with the bytes they were stored with.
type file struct {
	Format          int               `json:"format"`
	Server          string            `json:"server"`
	Key             string            `json:"key"`
	StoredAt        time.Time         `json:"storedAt"`
	ProtocolVersion string            `json:"protocolVersion"`
	Capabilities    json.RawMessage   `json:"capabilities"`
	ServerInfo      json.RawMessage   `json:"serverInfo"`
	Instructions    string            `json:"instructions"`
	Tools           []json.RawMessage `json:"tools"`
	Prompts         []json.RawMessage `json:"prompts"`
	Resources       []json.RawMessage `json:"resources"`
	Templates       []json.RawMessage `json:"resourceTemplates"`
}

// Load reads server's entry for key. A missing entry is an error matching
// fs.ErrNotExist; one that cannot be used matches ErrCorrupt.
func (s *Store) Load(server, key string) (*Entry, error) {
	p := s.path(server, key)
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	var f file
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, p, err)
	}
	switch {
	case f.Format != format:
		return nil, fmt.Errorf("%w: %s: format %d, want %d", ErrCorrupt, p, f.Format, format)
	case f.Key != key || f.Server != server:
		return nil, fmt.Errorf("%w: %s: written for another server or spec", ErrCorrupt, p)
	case f.StoredAt.IsZero():
		return nil, fmt.Errorf("%w: %s: no storedAt", ErrCorrupt, p)
	}
	return &Entry{
		StoredAt:        f.StoredAt,
		ProtocolVersion: f.ProtocolVersion,
		Capabilities:    nilIfNull(f.Capabilities),
		ServerInfo:      nilIfNull(f.ServerInfo),
		Instructions:    f.Instructions,
		Tools:           f.Tools,
		Prompts:         f.Prompts,
		Resources:       f.Resources,
		Templates:       f.Templates,
	}, nil
}

func nilIfNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return raw
}

// Save writes server's entry for key, atomically, and removes the
// server's entries for other keys (specs it no longer has).
func (s *Store) Save(server, key string, e *Entry) error {
	body, err := encode(server, key, e)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("creating the catalog cache directory: %w", err)
	}
	f, err := os.CreateTemp(s.dir, "."+server+".*.tmp") // 0600
	if err != nil {
		return fmt.Errorf("writing the catalog cache: %w", err)
	}
	tmp := f.Name()
	_, werr := f.Write(body)
	if err := f.Close(); werr == nil {
		werr = err
	}
	if werr == nil {
		werr = os.Rename(tmp, s.path(server, key))
	}
	if werr != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("writing the catalog cache: %w", werr)
	}
	s.removeOthers(server, key)
	return nil
}

// removeOthers deletes server's entries of other specs: a spec that
// changed back would be rediscovered anyway, and stale files only grow.
func (s *Store) removeOthers(server, key string) {
	keep := fileName(server, key)
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return
	}
	for _, de := range entries {
		name := de.Name()
		if name == keep || !strings.HasPrefix(name, server+".") || !strings.HasSuffix(name, ".json") {
			continue
		}
		if mid := strings.TrimSuffix(strings.TrimPrefix(name, server+"."), ".json"); strings.Contains(mid, ".") {
			continue // another server's, whose id starts with this one's and a dot (ids have none)
		}
		_ = os.Remove(filepath.Join(s.dir, name))
	}
}

// encode writes the file by hand so that every raw value keeps its bytes
// (encoding/json would compact them and escape HTML characters).
func encode(server, key string, e *Entry) ([]byte, error) {
	var b bytes.Buffer
	str := func(v string) {
		enc, _ := json.Marshal(v)
		b.Write(enc)
	}
	raw := func(field string, v json.RawMessage) error {
		if len(v) == 0 {
			v = json.RawMessage("null")
		} else if !json.Valid(v) {
			return fmt.Errorf("catalog cache: %s of server %q is not valid JSON", field, server)
		}
		b.Write(v)
		return nil
	}
	b.WriteString(`{"format":` + fmt.Sprint(format) + `,"server":`)
	str(server)
	b.WriteString(`,"key":`)
	str(key)
	b.WriteString(`,"storedAt":`)
	at, _ := e.StoredAt.UTC().MarshalJSON()
	b.Write(at)
	b.WriteString(`,"protocolVersion":`)
	str(e.ProtocolVersion)
	b.WriteString(`,"capabilities":`)
	if err := raw("capabilities", e.Capabilities); err != nil {
		return nil, err
	}
	b.WriteString(`,"serverInfo":`)
	if err := raw("serverInfo", e.ServerInfo); err != nil {
		return nil, err
	}
	b.WriteString(`,"instructions":`)
	str(e.Instructions)
	for _, l := range []struct {
		field string
		items []json.RawMessage
	}{{"tools", e.Tools}, {"prompts", e.Prompts}, {"resources", e.Resources}, {"resourceTemplates", e.Templates}} {
		b.WriteString(`,"` + l.field + `":[`)
		for i, it := range l.items {
			if i > 0 {
				b.WriteString(",\n")
			}
			if err := raw(l.field, it); err != nil {
				return nil, err
			}
		}
		b.WriteString("]")
	}
	b.WriteString("}\n")
	return b.Bytes(), nil
}

// IsMiss reports whether err from Load means there is simply no entry.
func IsMiss(err error) bool { return errors.Is(err, fs.ErrNotExist) }
