// Package relay keeps the trunk's records of who asked for what, so that
// what crosses the trunk reaches whom it concerns when many sessions share
// one connection to each server:
//
//   - Progress maps the progress token the trunk put on a session's request
//     (unique to the trunk: two hosts may pick the same token) back to that
//     session and its own token;
//   - InFlight lists the sessions with a call in flight on each server, so a
//     2025 server's request (sampling, elicitation, roots), which does not
//     say what call it is for, goes to one of them;
//   - Resync remembers the log level and resource subscriptions the hosts
//     asked for, so a server that connects later, or again after a restart,
//     is told them once on its new connection.
//
// The records are generic in the session type and know nothing of the trunk.
package relay
