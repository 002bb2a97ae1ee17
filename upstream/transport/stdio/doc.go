// Package stdio is the transport to a server that runs as a subprocess and
// speaks MCP on its stdin and stdout. It owns the process: its own process
// group (and, on Linux, death with the trunk), stderr drained to the log with
// a tail kept for error reports, and an ordered shutdown (stdin closed, then
// SIGTERM, then SIGKILL to the group). Platform code is behind build tags.
package stdio
