package tasks

// Binding is what the task ids of a host's session are bound to (the MAC of
// translate.TaskIDs covers it): the HTTP session's id; for a stateless
// request (perRequest), whose session ends with its answer, the caller's
// subject under trunk.http.auth, so that any request of that caller may
// follow the task, on any replica sharing the signing key; else nothing.
func Binding(perRequest bool, sessionID, subject string) string {
	switch {
	case !perRequest:
		return sessionID
	case subject != "":
		return "subject:" + subject
	}
	return ""
}
