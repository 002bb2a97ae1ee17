package hostcfg

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/mcptrunk/mcptrunk/internal/config"
)

// ConfigServers returns the entries of mcptrunk's config (its bytes) by
// name; nil config bytes (no file yet) have none.
func ConfigServers(cfg []byte) (map[string]json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(cfg)) == 0 {
		return out, nil
	}
	top, err := objectMembers(bytes.TrimPrefix(cfg, []byte{0xEF, 0xBB, 0xBF}))
	if err != nil {
		return nil, err
	}
	raw, ok := lookup(top, "mcpServers")
	if !ok || isNull(raw) {
		return out, nil
	}
	ms, err := objectMembers(raw)
	if err != nil {
		return nil, fmt.Errorf("mcpServers: %w", err)
	}
	for _, m := range ms {
		out[m.key] = m.value
	}
	return out, nil
}

// SameEntry reports whether two entries say the same, whatever their
// spacing and member order.
func SameEntry(a, b json.RawMessage) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// MergeServers returns mcptrunk's config with add's entries appended to
// its mcpServers, in order; every other byte of the file stays. Empty
// config bytes give a new file of just those servers. Names already in
// the config are the caller's to leave out.
func MergeServers(cfg []byte, add []Server) ([]byte, error) {
	var ms []rawMember
	for _, s := range add {
		if s.Entry != nil {
			ms = append(ms, rawMember{key: s.Name, value: s.Entry, encoded: true})
		}
	}
	if len(bytes.TrimSpace(cfg)) == 0 {
		l := layout{unit: "  ", pretty: true}
		obj := l.formatObject([]rawMember{{key: "mcpServers", value: l.formatObject(ms, l.unit)}}, "")
		return append(obj, '\n'), nil
	}
	if len(ms) == 0 {
		return cfg, nil
	}
	p := cfg
	if bytes.HasPrefix(p, []byte{0xEF, 0xBB, 0xBF}) {
		p = append([]byte("   "), p[3:]...) // same offsets, plain JSON
	}
	if s, ok, err := objectMember(p, "mcpServers"); err != nil {
		return nil, err
	} else if ok {
		return appendMembers(cfg, p, s.valueStart, s.valueEnd, ms)
	}
	l := layoutOf(p)
	return setMember(cfg, p, "mcpServers", func(indent string) []byte { return l.formatObject(ms, indent) })
}

// ValidateConfig parses mcptrunk's config (its bytes) as mcptrunk would,
// with lookupEnv for the variables; one it lacks counts as set: a server
// imported from a host may need a variable that only the host's
// environment has, and the file is no less valid for it.
func ValidateConfig(cfg []byte, lookupEnv func(string) (string, bool)) error {
	_, err := config.ParseAll(bytes.NewReader(cfg), func(name string) (string, bool) {
		if v, ok := lookupEnv(name); ok {
			return v, true
		}
		return placeholder(name)
	})
	return err
}
