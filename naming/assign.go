package naming

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
)

// maxLevel bounds collision resolution. Each level re-hashes with a new
// salt, so needing more than a couple of levels is astronomically unlikely;
// the bound only guarantees termination.
const maxLevel = 64

// entry is the naming state of one raw name during Assign.
type entry struct {
	raw   string
	clean string // Sanitize(raw)
	fixed bool   // legal and within budget: the exported item is raw, forever
	level int    // 0: plain clean form; n >= 1: clean form with hash tag n
	item  string
}

// Assign computes the exported names for all raw item names of one server
// (called once per list: tools, or prompts) under a length budget of maxLen
// characters (maxLen <= 0 means DefaultMaxLength). It returns raw -> name.
//
// The rules exist so that names are stable across upstream changes and
// always route back:
//
//   - A raw name that is already legal and fits is exported unchanged and
//     never changes when other names come and go; hosts and users may have
//     remembered it.
//   - A lossy name (one Sanitize changes, or the empty name) gets its
//     sanitized form, unless that form is shared with another raw name: then
//     each lossy one gets "_" + the first 8 hex digits of sha256(raw). A
//     legal name sharing the form keeps it.
//   - A name over budget is cut and "_" + hash appended so that the whole
//     exported name is exactly maxLen long; at least one character of the
//     item survives the cut, and the hash keeps the item non-empty.
//   - Any remaining collision (hash collision, or a hashed name equal to
//     another raw legal name) is resolved by re-hashing the non-fixed names
//     involved with a salt ("raw" + "\x00" + level) until all are distinct.
//
// The result depends only on the set of raw names, not their order or
// duplicates. Errors report an invalid server id and a budget that leaves
// fewer than MinItemRoom characters for the item.
func Assign(server string, raws []string, maxLen int) (map[string]string, error) {
	return Default.Assign(server, raws, maxLen)
}

// Assign is the package-level Assign for names in scheme s.
func (s Scheme) Assign(server string, raws []string, maxLen int) (map[string]string, error) {
	if err := checkID(server); err != nil {
		return nil, fmt.Errorf("server %q: id %v", server, err)
	}
	if maxLen <= 0 {
		maxLen = DefaultMaxLength
	}
	base := s.Prefix + server + Separator
	room := maxLen - len(base)
	if room < MinItemRoom {
		return nil, fmt.Errorf("server %q: name budget of %d characters leaves %d for item names, need at least %d; shorten the server name or raise the budget",
			server, maxLen, room, MinItemRoom)
	}

	// Work on the sorted set so that nothing depends on input order.
	uniq := slices.Clone(raws)
	slices.Sort(uniq)
	uniq = slices.Compact(uniq)

	entries := make([]entry, len(uniq))
	for i, raw := range uniq {
		e := entry{raw: raw, clean: Sanitize(raw)}
		switch {
		case isLegal(raw) && len(raw) <= room:
			e.fixed = true
		case e.clean == "" || len(e.clean) > room:
			e.level = 1 // the plain form is unusable; start hashed
		}
		e.item = itemFor(e, room)
		entries[i] = e
	}

	// Each round finds every item shared by several entries and moves all
	// non-fixed entries of each such group to their next level. A group holds
	// at most one fixed entry (raw names are distinct), so every round with a
	// collision makes progress. Groups are computed before any move, so the
	// outcome does not depend on map iteration order.
	for {
		groups := make(map[string][]int, len(entries))
		for i := range entries {
			groups[entries[i].item] = append(groups[entries[i].item], i)
		}
		moved := false
		for _, idx := range groups {
			if len(idx) < 2 {
				continue
			}
			for _, i := range idx {
				e := &entries[i]
				if e.fixed {
					continue
				}
				if e.level >= maxLevel {
					return nil, fmt.Errorf("server %q: could not give %q a unique name within %d characters", server, e.raw, maxLen)
				}
				e.level++
				e.item = itemFor(*e, room)
				moved = true
			}
		}
		if !moved {
			break
		}
	}

	out := make(map[string]string, len(entries))
	for _, e := range entries {
		out[e.raw] = base + e.item
	}
	return out, nil
}

// itemFor returns the item part for e at its current level, within room
// characters. room must be at least MinItemRoom.
func itemFor(e entry, room int) string {
	if e.fixed {
		return e.raw
	}
	if e.level == 0 {
		return e.clean
	}
	tag := "_" + hashTag(e.raw, e.level)
	clean := e.clean
	if len(clean)+len(tag) > room {
		// Cut so the exported name is exactly the budget. Sanitized text is
		// ASCII, so byte slicing cuts whole characters. room >= MinItemRoom
		// keeps at least one character of the original name.
		clean = clean[:room-len(tag)]
	}
	return clean + tag
}

// hashTag returns hashLen hex digits identifying raw. Level 1 is the plain
// sha256 of raw, so the common suffix is easy to reproduce by hand; higher
// levels, used only to break collisions, salt the input with the level.
func hashTag(raw string, level int) string {
	in := raw
	if level > 1 {
		in = raw + "\x00" + strconv.Itoa(level)
	}
	sum := sha256.Sum256([]byte(in))
	return hex.EncodeToString(sum[:])[:hashLen]
}
