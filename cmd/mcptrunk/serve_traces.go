package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/tracing"
	"github.com/mcptrunk/mcptrunk/proxy/observe"
)

// serveTraces is the tracing `serve` runs with, when the OTEL_*
// environment names an OTLP endpoint; nil otherwise, and a nil one adds
// no observer, so the trunk without a collector does no tracing work at
// all.
type serveTraces struct {
	t      *tracing.Tracing
	logger *slog.Logger
}

func startTraces(ctx context.Context, logger *slog.Logger) (*serveTraces, error) {
	t, err := tracing.Setup(ctx, version(), logger)
	if err != nil || t == nil {
		return nil, err
	}
	logger.Info("traces exported over OTLP")
	return &serveTraces{t: t, logger: logger}, nil
}

func (s *serveTraces) observers() []observe.Observer {
	if s == nil {
		return nil
	}
	return []observe.Observer{s.t.Observer()}
}

// close exports the spans still buffered, after the trunk has answered
// its last request, given a few seconds at most.
func (s *serveTraces) close() {
	if s == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.t.Shutdown(ctx); err != nil {
		s.logger.Warn("stopping the traces", "error", err)
	}
}
