package protocol

import "slices"

// LogLevels are MCP's log levels, most verbose first (RFC 5424's order).
var LogLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// LevelRank is a level's place in LogLevels; an unknown level ranks as the
// most severe, so a message with a level nobody knows is not withheld.
func LevelRank(level string) int {
	if i := slices.Index(LogLevels, level); i >= 0 {
		return i
	}
	return len(LogLevels)
}

// KnownLevel reports whether level is one of MCP's log levels.
func KnownLevel(level string) bool { return slices.Contains(LogLevels, level) }
