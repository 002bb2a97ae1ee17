package extensions

import (
	"bytes"
	"encoding/json"
	"sort"

	"github.com/mcptrunk/mcptrunk/internal/rawjson"
)

// Key is the member of a capabilities object (a host's or a server's) that
// declares extensions.
const Key = "extensions"

// merge combines the settings several servers declare for one extension,
// in the servers' name order, into the settings the trunk declares.
type merge func(settings []json.RawMessage) json.RawMessage

// merges are the extensions whose settings merge in a way of their own,
// by identifier; each is set by that extension's file. Any other
// extension is declared with the first server's settings.
var merges = map[string]merge{}

// declared returns the extensions an `extensions` member declares, by
// identifier, each with its settings as sent. Nil when the member is
// absent, null or not an object: nothing is declared then.
func declared(member json.RawMessage) map[string]json.RawMessage {
	member = bytes.TrimSpace(member)
	if len(member) == 0 || member[0] != '{' {
		return nil
	}
	ext, err := rawjson.Object(member)
	if err != nil || len(ext) == 0 {
		return nil
	}
	return ext
}

// Of returns the extensions a capabilities object, by member, declares.
func Of(caps map[string]json.RawMessage) map[string]json.RawMessage {
	return declared(caps[Key])
}

// OfRaw returns the extensions an encoded capabilities object declares (a
// server's, as it sent them).
func OfRaw(caps json.RawMessage) map[string]json.RawMessage {
	member, err := rawjson.Object(caps)
	if err != nil {
		return nil
	}
	return declared(member[Key])
}

// Union is the `extensions` member the trunk declares to a host, given
// what each ready server declares (in the servers' name order): every
// extension at least one of them declares and the trunk carries, with its settings merged
// (merges) or else the first server's. Nil when none declares any: the
// trunk then declares no member at all.
func Union(servers []map[string]json.RawMessage) json.RawMessage {
	settings := map[string][]json.RawMessage{}
	for _, ext := range servers {
		for id, s := range ext {
			if !carried(id) {
				continue
			}
			settings[id] = append(settings[id], s)
		}
	}
	if len(settings) == 0 {
		return nil
	}
	ids := make([]string, 0, len(settings))
	for id := range settings {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var b bytes.Buffer
	b.WriteByte('{')
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(id)
		b.Write(name)
		b.WriteByte(':')
		s := settings[id][0]
		if m := merges[id]; m != nil {
			if s = m(settings[id]); len(bytes.TrimSpace(s)) == 0 {
				s = json.RawMessage(`{}`)
			}
		}
		b.Write(bytes.TrimSpace(s))
	}
	b.WriteByte('}')
	return b.Bytes()
}
