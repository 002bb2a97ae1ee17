// Package hostcfg knows the MCP hosts' own config files: which hosts there
// are (Claude Desktop, Claude Code, Cursor, VS Code, Windsurf, Zed, Gemini CLI, Codex), where
// each keeps its servers on macOS, Windows and Linux, how to read their
// entries and turn them into mcptrunk's (each field and ${VAR} form mapped,
// or a reason why it cannot be), how to add them to mcptrunk's config and
// take a server out of it (EditConfig: a backup first, and a config that
// holds a credential readable by the user alone), and how to swap a host's
// servers for one mcptrunk entry and back, on disk with a backup (Install,
// Uninstall).
//
// Files are edited as bytes: only the member that holds the servers
// changes, so a host's other settings, their order, and (in the JSON with
// comments of Zed and VS Code) the comments outside that member survive.
// It does no I/O beyond the files it is given (and, in SystemEnv, the
// process's home, directory and environment, which every other function
// takes as an Env value, so that tests give their own), and never prints
// a value of an env variable or header: those may be secrets.
package hostcfg
