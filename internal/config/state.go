package config

import (
	"encoding/json"
	"net/url"
)

// State is where the trunk keeps what must outlive a process or be shared
// by replicas (trunk.state; opened by internal/statestore): callers'
// sign-ins to servers in credentials mode "oauth", exchanged tokens and,
// with Redis, the counts of trunk.limits. Absent (the zero value), they
// are kept in the process's memory.
type State struct {
	// Configured is true when the config has trunk.state at all.
	Configured bool `json:"-"`
	// URL is a Redis URL (redis:// or rediss://), for replicas sharing
	// one store; empty for the embedded store.
	URL string `json:"url,omitempty"`
	// Path is the embedded store's file (relative to the config's
	// directory); empty for the default under the user's state directory.
	// Only without URL.
	Path string `json:"path,omitempty"`
	// KeyFile holds the 32-byte key tokens are sealed under (AES-256-GCM),
	// relative to the config's directory. Without it nothing that asks to
	// be sealed is written to the store.
	KeyFile string `json:"keyFile,omitempty"`
	// PreviousKeyFile holds the key KeyFile replaced: records sealed
	// under it are still read (and sealed again under KeyFile), so that
	// the key can be rotated without signing everyone out.
	PreviousKeyFile string `json:"previousKeyFile,omitempty"`
	// OnUnavailable is what a check that needs the store does while the
	// store does not answer: StateRefuse (the default: fail closed) or
	// StateAllow.
	OnUnavailable string `json:"onUnavailable,omitempty"`
}

// trunk.state.onUnavailable values.
const (
	StateRefuse = "refuse"
	StateAllow  = "allow"
)

// Redis reports whether the store is Redis (else it is the embedded one).
func (s State) Redis() bool { return s.URL != "" }

// Where is the store's location fit to show: the file, or the Redis URL
// without its password.
func (s State) Where() string {
	if s.URL == "" {
		return s.Path
	}
	return RedactURL(s.URL)
}

// RedactURL is u without the password of its user info, for logs and
// status.
func RedactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(an unparsable URL)"
	}
	if _, has := p.User.Password(); has {
		p.User = url.UserPassword(p.User.Username(), "xxxxx")
	}
	return p.String()
}

type rawState struct {
	URL             json.RawMessage `json:"url"`
	Path            json.RawMessage `json:"path"`
	KeyFile         json.RawMessage `json:"keyFile"`
	PreviousKeyFile json.RawMessage `json:"previousKeyFile"`
	OnUnavailable   json.RawMessage `json:"onUnavailable"`
}

// state decodes, expands and validates trunk.state. The key files are
// read when the store is opened, not here: a config parses without them.
func (p *fieldErrs) state(raw json.RawMessage, field string, lookup func(string) (string, bool)) State {
	var rs rawState
	if !p.object(raw, field, &rs) {
		return State{}
	}
	s := State{Configured: true, OnUnavailable: StateRefuse}
	for _, f := range []struct {
		raw  json.RawMessage
		name string
		dst  *string
	}{{rs.URL, "url", &s.URL}, {rs.Path, "path", &s.Path}, {rs.KeyFile, "keyFile", &s.KeyFile}, {rs.PreviousKeyFile, "previousKeyFile", &s.PreviousKeyFile}} {
		if v, ok := p.str(f.raw, field+"."+f.name); ok {
			*f.dst, _ = p.expand(field+"."+f.name, v, lookup)
		}
	}
	if s.URL != "" {
		if s.Path != "" {
			p.addf(field+".path", "is the embedded store's file and url a Redis server's: set only one of them")
		}
		if u, err := url.Parse(s.URL); err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
			p.addf(field+".url", "must be a Redis URL: redis://[user:password@]host:port[/db] or rediss://... (the value is not shown: it may hold a password)")
		}
	}
	if s.PreviousKeyFile != "" && s.KeyFile == "" {
		p.addf(field+".previousKeyFile", "is the key keyFile replaced: set keyFile too")
	}
	if v, ok := p.str(rs.OnUnavailable, field+".onUnavailable"); ok && v != "" {
		switch v {
		case StateRefuse, StateAllow:
			s.OnUnavailable = v
		default:
			p.addf(field+".onUnavailable", "must be %q or %q, got %q", StateRefuse, StateAllow, v)
		}
	}
	return s
}
