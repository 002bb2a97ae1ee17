// Package tasks carries MCP tasks between hosts and servers of either task
// model. It reads a server's task capability or extension and a tool's
// task support, rewrites the task ids in results and notifications, lists
// a server's tasks to the end, remembers which session created a task (for
// its status notifications and its list), and runs a task to its end for a
// host that does not speak tasks; it needs no trunk: proxy wires these to
// its sessions and servers.
//
// Two task models meet here. 2025-11-25's core `tasks` capability: a host
// calls a tool with a `task` member, the server answers with a task, and
// the host then polls, fetches the result of, lists or cancels it by id
// (drive runs one for a host). 2026-07-28's extension (Extension, SEP-2663):
// the server decides which calls of a client that declared it become tasks,
// answers with a flat CreateTaskResult, and the client follows it with
// tasks/get, which inlines the result, answers its input requests with
// tasks/update, and cancels it (follow runs one for a host). Either way the
// ids a host sees are issued by translate.TaskIDs: the server's name and its
// own id under a MAC bound to the session, so any replica sharing the
// signing key can route them and no host can reach another's tasks.
package tasks
