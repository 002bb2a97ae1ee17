package main

import (
	"log/slog"

	"github.com/mcptrunk/mcptrunk/internal/audit"
	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/proxy/observe"
)

// serveAudit is serve's audit log, or nothing when trunk.audit is not set.
// It is read at start only: a reload that changes trunk.audit is logged
// and applies at the next start (the observers are fixed when the trunk
// is built).
type serveAudit struct {
	log  *audit.Log
	conf config.Audit
}

// startAudit opens the audit log the config asks for. It cannot fail: a
// file that cannot be written is the audit log's own failure, logged and
// counted, never the trunk's.
func startAudit(a config.Audit, logger *slog.Logger) *serveAudit {
	s := &serveAudit{conf: a}
	if a.File != "" {
		s.log = audit.New(audit.Options{Audit: a, Session: audit.SessionStdio, Logger: logger})
		logger.Info("audit log", "file", a.File, "arguments", a.Arguments)
	}
	return s
}

// observers is what the trunk's Observers get from the audit log.
func (s *serveAudit) observers() []observe.Observer {
	if s.log == nil {
		return nil
	}
	return []observe.Observer{s.log}
}

// reloaded tells the user that a changed trunk.audit waits for a restart.
func (s *serveAudit) reloaded(cfg *config.Config, logger *slog.Logger) {
	if cfg.Trunk.Audit != s.conf {
		logger.Warn("trunk.audit changed; the audit log keeps its settings until mcptrunk restarts")
	}
}

// close writes the queued lines and closes the file, after the last
// request has ended.
func (s *serveAudit) close() {
	if s.log != nil {
		s.log.Close()
	}
}
