// Package stdio is the transport to a server that runs as a subprocess and
// speaks MCP on its stdin and stdout. It owns the process: its own process
// group (and, on Linux, death with the trunk), stderr drained to the log with
// a tail kept for error reports, and an ordered shutdown (stdin closed, then
// SIGTERM, then SIGKILL to the group). Platform code is behind build tags.
//
// On Windows the command is resolved through the server's PATH and PATHEXT
// (npx is npx.cmd), a batch file runs through cmd.exe with a command line
// quoted so that no argument can become a command (internal/winexec), and
// the server's tree lives in a Job Object that dies with the trunk; with no
// SIGTERM there, the shutdown goes from stdin closed to killing the job.
package stdio
