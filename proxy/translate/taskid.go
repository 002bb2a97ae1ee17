package translate

import (
	"errors"
	"strings"
)

// TaskIDs makes and opens the task ids the trunk hands a host for the
// tasks its servers create. An id carries everything needed to route it
// (the server and the server's own task id), so any trunk holding the key
// can answer tasks/get, tasks/result or tasks/cancel for it with no table
// of tasks: a task outlives nothing in the process but the key. An HMAC
// under that key covers the server, the upstream id and the session the
// task was created in, so a host can neither forge an id (point one at a
// server or a task of its choosing) nor use one issued to another session.
type TaskIDs struct{ key sealKey }

// NewTaskIDs returns ids signed with a key derived from secret, which the
// replicas of a deployment share so that any of them opens the ids of all,
// or with a key of this process when secret is empty.
func NewTaskIDs(secret []byte) *TaskIDs { return &TaskIDs{key: newSealKey(secret, "task ids")} }

// RelatedTaskKey is the reserved _meta key by which a 2025-11-25 message
// names the task it belongs to ({"taskId": ...}).
const RelatedTaskKey = "io.modelcontextprotocol/related-task"

// taskPrefix marks the trunk's task ids, so an error can tell a host that
// an id is not one the trunk issued.
const taskPrefix = "mcptrunk-task1."

// errBadTaskID is the answer for an id the trunk did not issue to this
// session.
var errBadTaskID = errors.New("taskId is not one mcptrunk issued to this session")

// Issue returns the id the host gets for upstream task id of server,
// created in session ("" where the revision has no sessions).
func (t *TaskIDs) Issue(session, server, id string) string {
	return t.key.seal(taskPrefix, []byte(server+"\x00"+id), session)
}

// Open returns the server and upstream task id an issued id names, or
// errBadTaskID when the id was not issued by this key to session.
func (t *TaskIDs) Open(session, taskID string) (server, id string, err error) {
	payload, ok := t.key.open(taskPrefix, taskID, session)
	if !ok {
		return "", "", errBadTaskID
	}
	server, id, ok = strings.Cut(string(payload), "\x00")
	if !ok {
		return "", "", errBadTaskID
	}
	return server, id, nil
}
