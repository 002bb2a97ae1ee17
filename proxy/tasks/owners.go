package tasks

import (
	"slices"
	"strings"
	"sync"
)

// A server's status notification names its own task id and arrives on the
// one connection the trunk holds to that server, which many sessions may
// share; likewise its tasks/list lists every session's tasks. Owners
// remembers which session created each task, while that session is
// attached, so the notification reaches that session only and a session's
// list shows its own tasks. It is the one per-process record of tasks: a
// notification arrives on this process's connection, and a 2025-era session
// lives on one replica, so no other replica could use it anyway.
type Owners[S comparable] struct {
	m sync.Map // key(server, id) -> S
}

func key(server, id string) string { return server + "\x00" + id }

// Own records that s created server's task id.
func (o *Owners[S]) Own(server, id string, s S) { o.m.Store(key(server, id), s) }

// Owner returns the session that created server's task id.
func (o *Owners[S]) Owner(server, id string) (S, bool) {
	v, ok := o.m.Load(key(server, id))
	if !ok {
		var zero S
		return zero, false
	}
	return v.(S), true
}

// Owns reports whether s created server's task id (and is still attached).
func (o *Owners[S]) Owns(server, id string, s S) bool {
	owner, ok := o.Owner(server, id)
	return ok && owner == s
}

// Forget drops the tasks of a session that went.
func (o *Owners[S]) Forget(s S) {
	o.m.Range(func(k, v any) bool {
		if v.(S) == s {
			o.m.Delete(k)
		}
		return true
	})
}

// IDs are the ids of server's tasks that s created, in order.
func (o *Owners[S]) IDs(server string, s S) []string {
	var ids []string
	o.m.Range(func(k, v any) bool {
		if id, ok := strings.CutPrefix(k.(string), key(server, "")); ok && v.(S) == s {
			ids = append(ids, id)
		}
		return true
	})
	slices.Sort(ids)
	return ids
}
