package hostcfg

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// Uninstalled is what Uninstall writes back to a host file, and what of
// the host's own changes since install it kept.
type Uninstalled struct {
	Data []byte
	// Exact: Data is the backup itself, the file having differed from it
	// only as Install left it.
	Exact bool
	// Added names the servers the host's file gained since install (the
	// user added them to the host while mcptrunk was installed); they stay,
	// after the backup's.
	Added []string
	// Changed names the backup's servers the host's file now holds with
	// another entry: the current entry stays, so the backup's is then only
	// in the backup, which Uninstall keeps (KeepBackup).
	Changed []string
	// Kept is where Uninstall kept the backup ("": removed).
	Kept string
}

// UninstallEdit returns what Uninstall writes back to a host file: the
// current file with its servers member set back to the backup's, merged
// with what the host's file gained since install, so that nothing the user
// did meanwhile is lost. The entry Install added (a server running
// mcptrunk, named SelfName or "mcptrunk") goes; a server added since stays
// (Added); a server whose entry changed since keeps its current entry
// (Changed); every other byte outside the servers member, such as settings
// the host changed since, stays as it is now. With nothing gained, the
// result is the backup byte for byte (Exact).
func UninstallEdit(loc Location, current, backup []byte) (Uninstalled, error) {
	if loc.Host.toml() {
		return codexUninstallEdit(loc, current, backup)
	}
	pc, err := plain(loc.Host, current)
	if err == nil {
		_, err = objectMembers(pc)
	}
	if err != nil {
		return Uninstalled{}, &ParseError{Host: loc.Host, Path: loc.Path, Err: err}
	}
	pb, err := plain(loc.Host, backup)
	if err == nil {
		_, err = objectMembers(pb)
	}
	if err != nil {
		return Uninstalled{}, &ParseError{Host: loc.Host, Path: BackupPath(loc.Path), Err: err}
	}
	var u Uninstalled
	value, err := u.merge(loc, current, pc, backup, pb)
	if err != nil {
		return Uninstalled{}, err
	}
	if u.Data, err = setMember(current, pc, loc.Host.Key, value); err != nil {
		return Uninstalled{}, err
	}
	u.Exact = bytes.Equal(u.Data, backup)
	if u.Exact {
		u.Data = backup
	}
	return u, nil
}

// merge returns the servers member to write back (nil: none), noting in u
// what it kept of the current file's servers.
func (u *Uninstalled) merge(loc Location, current, pc, backup, pb []byte) (func(string) []byte, error) {
	installed := installedNames(loc, current)
	cur, _ := serverSpans(loc, pc) // a servers member that is not an object has no entries to keep
	old, _ := serverSpans(loc, pb)
	inBackup := map[string]span{}
	for _, s := range old {
		inBackup[s.key] = s
	}
	var added []rawMember
	changed := map[string][]byte{}
	for _, c := range cur {
		v := current[c.valueStart:c.valueEnd]
		b, ok := inBackup[c.key]
		switch {
		case installed[c.key]:
		case !ok:
			u.Added = append(u.Added, c.key)
			added = append(added, rawMember{key: c.key, value: v})
		case !SameEntry(v, backup[b.valueStart:b.valueEnd]):
			u.Changed = append(u.Changed, c.key)
			changed[c.key] = v
		}
	}

	member, ok, err := objectMember(pb, loc.Host.Key)
	if err != nil {
		return nil, err
	}
	switch {
	case !ok && len(added) == 0: // no servers before install, none since
		if s, found := findMember(pb, loc.Host.Key); found {
			v := backup[s.valueStart:s.valueEnd] // null, as it was
			return func(string) []byte { return v }, nil
		}
		return nil, nil
	case !ok:
		l := layoutOf(pc)
		return func(indent string) []byte { return l.formatObject(added, indent) }, nil
	}
	// The backup's servers member, with the changed entries' values
	// replaced (from the last, so the earlier offsets hold) and the added
	// entries appended.
	data := backup
	for i := len(old) - 1; i >= 0; i-- {
		if v, ok := changed[old[i].key]; ok {
			data = splice(data, old[i].valueStart, old[i].valueEnd, v)
		}
	}
	if len(added) > 0 {
		p, err := plain(loc.Host, data)
		if err == nil {
			member, _, err = objectMember(p, loc.Host.Key)
		}
		if err == nil {
			data, err = appendMembers(data, p, member.valueStart, member.valueEnd, added)
		}
		if err != nil {
			return nil, err
		}
	}
	p, err := plain(loc.Host, data)
	if err == nil {
		member, _, err = objectMember(p, loc.Host.Key)
	}
	if err != nil {
		return nil, err
	}
	v := data[member.valueStart:member.valueEnd]
	return func(string) []byte { return v }, nil
}

// installedNames are the servers of a host file that Install put there:
// those named as Install names its entry that run mcptrunk. Another entry
// running mcptrunk (a second config the user added by hand) is the user's.
func installedNames(loc Location, data []byte) map[string]bool {
	servers, _ := Read(loc, data, Env{})
	out := map[string]bool{}
	for _, s := range servers {
		if s.Self && (s.Name == SelfName || s.Name == "mcptrunk") {
			out[s.Name] = true
		}
	}
	return out
}

// findMember is the top-level member key of p, whatever its value.
func findMember(p []byte, key string) (span, bool) {
	members, _, _, err := topMembers(p)
	if err != nil {
		return span{}, false
	}
	for _, s := range members {
		if s.key == key {
			return s, true
		}
	}
	return span{}, false
}

// KeepBackup moves Install's backup of a host file aside, to a name of its
// own stamped with the time, rather than removing it: Uninstall does so
// when the backup holds entries the host's file no longer does. It
// returns the new path. A later Install is then not refused as if still
// installed.
func KeepBackup(hostFile string, now time.Time) (string, error) {
	from := BackupPath(hostFile)
	base := from + "." + now.UTC().Format("20060102T150405Z")
	to := base
	for i := 2; ; i++ {
		if _, err := os.Lstat(to); os.IsNotExist(err) {
			break
		}
		to = fmt.Sprintf("%s-%d", base, i)
	}
	if err := os.Rename(from, to); err != nil {
		return "", err
	}
	return to, nil
}

// Uninstall puts loc's file back from the backup Install kept, merged with
// what the file gained since (UninstallEdit; the backup as it is when the
// file is gone), and removes the backup, or, when the backup holds entries
// the file no longer does (Changed), keeps it under a new name, in Kept.
// The servers Install added to mcptrunk's config stay there.
func Uninstall(loc Location, now time.Time) (Uninstalled, error) {
	backup := BackupPath(loc.Path)
	saved, err := os.ReadFile(backup)
	if errors.Is(err, fs.ErrNotExist) {
		return Uninstalled{}, fmt.Errorf("%s: not installed: there is no backup at %s", loc.Path, backup)
	} else if err != nil {
		return Uninstalled{}, err
	}
	current, err := os.ReadFile(loc.Path)
	u := Uninstalled{Data: saved, Exact: true}
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return Uninstalled{}, err
	default:
		if u, err = UninstallEdit(loc, current, saved); err != nil {
			return Uninstalled{}, err
		}
	}
	if err := WriteAtomic(loc.Path, u.Data, 0o600); err != nil {
		return Uninstalled{}, err
	}
	if len(u.Changed) == 0 {
		return u, os.Remove(backup)
	}
	if u.Kept, err = KeepBackup(loc.Path, now); err != nil {
		return u, fmt.Errorf("keeping the backup of %s's file: %w", loc.Host.Name, err)
	}
	return u, nil
}
