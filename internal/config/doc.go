// Package config is mcptrunk's config format: a superset of Claude Desktop's
// claude_desktop_config.json. It parses a file into validated Specs (one per
// upstream server) and TrunkOptions, expands ${VAR} references, reports every
// problem at once naming the server and field (never a secret's value), finds
// the file (Resolve) and watches it for edits (Watch). The CLI, the Fleet and
// the proxy all read configs through it; it knows nothing of them.
package config
