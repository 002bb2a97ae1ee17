package pin

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
)

// Def is one definition a server exports now, as it sent it.
type Def struct {
	Key string
	Raw json.RawMessage
}

// Snapshot is the lockfile entries of what a server exports now.
func Snapshot(defs map[Kind][]Def) (Server, error) {
	s := Server{}
	for kind, list := range defs {
		if len(list) == 0 {
			continue
		}
		m := make(map[string]Entry, len(list))
		for _, d := range list {
			canon, sum, err := Canonical(kind, d.Raw)
			if err != nil {
				return nil, fmt.Errorf("%s %q: %w", kind.Singular(), d.Key, err)
			}
			m[d.Key] = Entry{SHA256: sum, Definition: canon}
		}
		s[kind] = m
	}
	return s, nil
}

// Status is how an item differs from what is pinned.
type Status string

const (
	New     Status = "new"
	Changed Status = "changed"
	Removed Status = "removed"
)

// Change is one item whose definition is not the one pinned.
type Change struct {
	Server   string
	Kind     Kind
	Key      string
	Status   Status
	Old, New json.RawMessage // canonical definitions; nil where there is none
}

// Compare lists how now's lists differ from pinned (nil: the server was
// never pinned, and everything is new), sorted by kind and key. Apps and
// skills are left out: serve holds them when they are read (CompareAll).
func Compare(server string, pinned, now Server) []Change {
	return compare(server, pinned, now, Kinds)
}

// CompareAll is Compare of the lists, the apps and the skills, for now a
// snapshot that read every app and listed every skill (mcptrunk pin).
func CompareAll(server string, pinned, now Server) []Change {
	return compare(server, pinned, now, append(slices.Clone(Kinds), Apps, Skills))
}

func compare(server string, pinned, now Server, kinds []Kind) []Change {
	var out []Change
	for _, kind := range kinds {
		for key, e := range now[kind] {
			old, ok := pinned[kind][key]
			switch {
			case !ok:
				out = append(out, Change{Server: server, Kind: kind, Key: key, Status: New, New: e.Definition})
			case old.SHA256 != e.SHA256:
				out = append(out, Change{Server: server, Kind: kind, Key: key, Status: Changed, Old: old.Definition, New: e.Definition})
			}
		}
		for key, old := range pinned[kind] {
			if _, ok := now[kind][key]; !ok {
				out = append(out, Change{Server: server, Kind: kind, Key: key, Status: Removed, Old: old.Definition})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return kindOrder(out[i].Kind) < kindOrder(out[j].Kind)
		}
		return out[i].Key < out[j].Key
	})
	return out
}

func kindOrder(k Kind) int {
	for i, kk := range Kinds {
		if kk == k {
			return i
		}
	}
	return len(Kinds)
}

// Matches reports whether a definition with hash sum is the one pinned.
func (s Server) Matches(kind Kind, key, sum string) bool {
	e, ok := s[kind][key]
	return ok && e.SHA256 == sum
}
