package proxy

import (
	"encoding/json"

	"github.com/mcptrunk/mcptrunk/internal/rawjson"
)

// taskStatusMethod is the notification by which a 2025-11-25 server tells
// its client a task's status changed.
const taskStatusMethod = "notifications/tasks/status"

// A server's status notification names its own task id and goes to the
// one connection the trunk holds to it, which many sessions may share. The
// trunk remembers which session created each task (while that session is
// attached and the task has not ended) so the notification reaches that
// session only, under the id that session was given. This is the one
// per-process record of tasks: a notification arrives on this process's
// connection, so no other replica could deliver it anyway.

func taskKey(server, id string) string { return server + "\x00" + id }

// ownTask records that s created server's task id.
func (h *hostSet) ownTask(server, id string, s *Session) {
	if s != nil {
		h.tasks.Store(taskKey(server, id), s)
	}
}

// taskOwner returns the session that created server's task id.
func (h *hostSet) taskOwner(server, id string) (*Session, bool) {
	v, ok := h.tasks.Load(taskKey(server, id))
	if !ok {
		return nil, false
	}
	return v.(*Session), true
}

// forgetTasks drops the tasks of a session that went.
func (h *hostSet) forgetTasks(s *Session) {
	h.tasks.Range(func(k, v any) bool {
		if v.(*Session) == s {
			h.tasks.Delete(k)
		}
		return true
	})
}

// terminalTask reports whether a task status is final: no notification
// follows it.
func terminalTask(status string) bool {
	return status == "completed" || status == "failed" || status == "cancelled"
}

// taskStatus delivers a server's notifications/tasks/status to the session
// that created the task, with the id that session knows it by; a task no
// attached session created is not announced to anyone.
func (t *Trunk) taskStatus(server string, params json.RawMessage) {
	id, _ := rawjson.StringField(params, "taskId")
	s, ok := t.hosts.taskOwner(server, id)
	if !ok {
		t.logger.Debug("status of a task no session created", "server", server)
		return
	}
	if status, _ := rawjson.StringField(params, "status"); terminalTask(status) {
		t.hosts.tasks.Delete(taskKey(server, id))
	}
	out, err := rawjson.ReplaceString(params, "taskId", t.taskIDs.Issue(s.id, server, id))
	if err != nil {
		return
	}
	if err := s.Notify(taskStatusMethod, out); err != nil {
		t.notifyFailed(server, taskStatusMethod, err)
	}
}
