// Package tasks holds what the trunk does with MCP tasks that needs no
// trunk: reading a server's task capability and a tool's task support,
// rewriting the task ids in results and notifications, listing a server's
// tasks to the end, remembering which session created a task (for its
// status notifications), and running a task to its end for a host that does
// not speak tasks. proxy wires these to its sessions and servers.
//
// Tasks here are 2025-11-25's core `tasks` capability: a host calls a tool
// with a `task` member, the server answers with a task, and the host then
// polls, fetches the result of, lists or cancels it by id. The ids a host
// sees are issued by translate.TaskIDs: the server's name and its own id
// under a MAC bound to the session, so any replica can route them and no
// host can reach another session's tasks.
package tasks
