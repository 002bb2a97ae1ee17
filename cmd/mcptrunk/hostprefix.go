package main

import (
	"log/slog"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/naming"
)

// fitHostPrefix shrinks the config's name budget so that a name the trunk
// exports, behind the prefix its host puts in front of every tool of the
// trunk's (serve --host-prefix, which install writes: Claude Code offers
// mcp__<its name for the trunk>__<our name>), is at most
// naming.ModelNameLimit long as the model is offered it. The budget never
// grows, and never goes below naming.MinBudget (a prefix that long is
// logged). The exact prefix wins over the trunk's guess from the host's
// clientInfo (proxy.Options.ExactHostPrefix).
func fitHostPrefix(cfg *config.Config, hostPrefix string, logger *slog.Logger) {
	if hostPrefix == "" {
		return
	}
	budget, fits := naming.FitPrefix(hostPrefix, naming.ModelNameLimit)
	if !fits {
		logger.Warn("the host's prefix leaves too little of the name budget; names the model is offered may be longer than 64 characters",
			"prefix", hostPrefix, "budget", budget)
	}
	if cfg.Trunk.MaxNameLength == 0 || cfg.Trunk.MaxNameLength > budget {
		cfg.Trunk.MaxNameLength = budget
	}
}
