package main

import (
	"log/slog"

	"github.com/mcptrunk/mcptrunk/internal/config"
)

// modelNameLimit is the longest tool name the hosts' model APIs take:
// OpenAI-style APIs refuse a request with a longer one, and Gemini CLI
// cuts longer names in the middle.
const modelNameLimit = 64

// minNameBudget is the shortest name budget the config allows.
const minNameBudget = 32

// fitHostPrefix shrinks the config's name budget so that a name the trunk
// exports, behind the prefix its host puts in front of every tool of the
// trunk's (serve --host-prefix, which install writes: Claude Code offers
// mcp__<its name for the trunk>__<our name>), is at most modelNameLimit
// long as the model is offered it. The budget never grows, and never goes
// below minNameBudget (a prefix that long is logged).
func fitHostPrefix(cfg *config.Config, hostPrefix string, logger *slog.Logger) {
	if hostPrefix == "" {
		return
	}
	budget := max(modelNameLimit-len(hostPrefix), minNameBudget)
	if modelNameLimit-len(hostPrefix) < minNameBudget {
		logger.Warn("the host's prefix leaves too little of the name budget; names the model is offered may be longer than 64 characters",
			"prefix", hostPrefix, "budget", budget)
	}
	if cfg.Trunk.MaxNameLength == 0 || cfg.Trunk.MaxNameLength > budget {
		cfg.Trunk.MaxNameLength = budget
	}
}
