package proxy

import (
	"slices"
	"time"

	"github.com/mcptrunk/mcptrunk/proxy/access"
	"github.com/mcptrunk/mcptrunk/proxy/catalog"
)

// announceDelay gathers a burst of changes (a server registering tools one
// by one, several servers arriving together) into one list_changed.
const announceDelay = 25 * time.Millisecond

// announce sends the host one list_changed per list that changed since the
// host last saw it. Lists the host has never asked for are not announced:
// its first request will see them as they are. A server that (re)connected
// is first told the host's log level and subscriptions (resync).
func (t *Trunk) announce() {
	for {
		select {
		case <-t.stopped:
			return
		case <-t.kick:
		}
		select {
		case <-t.stopped:
			return
		case <-time.After(announceDelay):
		}
		t.resync()
		st := t.state.Load()
		cat := st.catalog()
		t.announceMu.Lock()
		before := t.seen
		methods := changedSince(&t.seen, cat)
		t.announceMu.Unlock()
		if len(methods) == 0 {
			continue
		}
		for _, s := range t.hosts.all() {
			for _, m := range announced(s, st.access, before, cat, methods) {
				if err := s.Notify(m, nil); err != nil {
					t.logger.Debug("announcing a change failed", "method", m, "error", err)
				}
			}
		}
	}
}

// announced is the part of methods, the lists that changed from before to
// cat, that changed in the view of session s's caller: a change of
// servers it does not see is no change to it, and it is told nothing.
func announced(s *Session, rules *access.Rules, before [catalog.ListCount]*catalog.Catalog, cat *catalog.Catalog, methods []string) []string {
	c := *s.caller.Load()
	if !rules.Restricts(c.Caller) {
		return methods
	}
	now := rules.View(cat, c)
	olds := map[*catalog.Catalog]*catalog.Catalog{}
	return listsChanged(func(l catalog.List) bool {
		if before[l] == nil || !slices.Contains(methods, catalog.Specs[l].Changed) {
			return false
		}
		old, ok := olds[before[l]]
		if !ok {
			old = rules.FreshView(before[l], c)
			olds[before[l]] = old
		}
		return !catalog.EqualList(old, now, l)
	})
}

// served records that the host has seen list l as it is in cat.
func (t *Trunk) served(l catalog.List, cat *catalog.Catalog) {
	t.announceMu.Lock()
	t.seen[l] = cat
	t.announceMu.Unlock()
}

// changedSince returns the list_changed notifications cat calls for, given
// the catalog each list was last served or announced from (nil: never
// served, nothing to announce), and records cat in seen for each list that
// changed.
func changedSince(seen *[catalog.ListCount]*catalog.Catalog, cat *catalog.Catalog) []string {
	return listsChanged(func(l catalog.List) bool {
		if seen[l] == nil || catalog.EqualList(seen[l], cat, l) {
			return false
		}
		seen[l] = cat
		return true
	})
}

// viewChanged returns the list_changed notifications a host is owed when
// its view of the same catalog goes from old to now (the trunk's policy or
// profiles changed, the servers did not), for the lists served says it has
// been served.
func viewChanged(old, now *catalog.Catalog, served func(catalog.List) bool) []string {
	return listsChanged(func(l catalog.List) bool { return served(l) && !catalog.EqualList(old, now, l) })
}

// listsChanged is the notification of each list changed reports, in list
// order. Resources and templates share one notification, sent once.
func listsChanged(changed func(catalog.List) bool) []string {
	var methods []string
	for l := catalog.List(0); l < catalog.ListCount; l++ {
		if !changed(l) {
			continue
		}
		if m := catalog.Specs[l].Changed; len(methods) == 0 || methods[len(methods)-1] != m {
			methods = append(methods, m)
		}
	}
	return methods
}
