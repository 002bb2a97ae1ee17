package main

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/metrics"
	"github.com/mcptrunk/mcptrunk/internal/statuspage"
	"github.com/mcptrunk/mcptrunk/proxy"
	"github.com/mcptrunk/mcptrunk/proxy/observe"
)

// serveObserve is what `serve` runs beside the trunk to report on it: the
// metrics and the HTTP listener they are served on. It is nil when nothing
// asks for either, and a nil one adds nothing, not even an observer.
type serveObserve struct {
	metrics  *metrics.Metrics
	listener *statuspage.Listener // nil without --metrics
	logger   *slog.Logger
}

// startObserve makes the metrics when --metrics gives an address, the
// OpenTelemetry environment asks for OTLP or always says so (the HTTP
// downstream serves /metrics), and binds the listener.
func startObserve(ctx context.Context, addr string, always bool, getenv func(string) string, logger *slog.Logger) (*serveObserve, error) {
	if addr == "" && !always && !metrics.OTLPConfigured(getenv) {
		return nil, nil
	}
	o := &serveObserve{logger: logger}
	if addr != "" {
		l, err := statuspage.Listen("--metrics", addr, logger)
		if err != nil {
			return nil, err
		}
		logger.Info("metrics listening", "addr", l.Addr())
		o.listener = l
	}
	m, err := metrics.New(ctx, metrics.Options{Version: version(), Getenv: getenv, Logger: logger})
	if err != nil {
		return nil, errors.Join(err, o.close())
	}
	if m.OTLP() {
		logger.Info("metrics exported over OTLP")
	}
	o.metrics = m
	return o, nil
}

// metricsListen is where serve serves /metrics: --metrics, else
// trunk.metrics.listen; "" for nowhere.
func (c *serveCommand) metricsListen(cfg *config.Config) string {
	return cmp.Or(c.metricsAddr, cfg.Trunk.Metrics.Listen)
}

// metricsReloaded tells the user that a reload changed the metrics
// listener's address (--metrics, else trunk.metrics.listen) from was to
// now, which waits for a restart: the listener is bound before the trunk
// is made.
func metricsReloaded(was, now string, logger *slog.Logger) {
	if now != was {
		logger.Warn("trunk.metrics changed; the metrics listener keeps its address until mcptrunk restarts", "listening", was != "")
	}
}

// metricsOrNil is the metrics, or nil when there are none.
func (o *serveObserve) metricsOrNil() *metrics.Metrics {
	if o == nil {
		return nil
	}
	return o.metrics
}

// observers are the proxy observers to give the trunk.
func (o *serveObserve) observers() []observe.Observer {
	if o == nil {
		return nil
	}
	return []observe.Observer{o.metrics}
}

// attach starts reporting on t: its status in the metrics, the listener
// serving.
func (o *serveObserve) attach(t *proxy.Trunk) error {
	if o == nil {
		return nil
	}
	if err := o.metrics.WatchStatus(t.Status); err != nil {
		return err
	}
	if o.listener != nil {
		o.listener.Serve(observeMux(t, o.metrics), "")
	}
	return nil
}

// close stops the listener and the metrics, after the trunk: the OTLP
// exporter sends its last readings, given a few seconds at most.
func (o *serveObserve) close() error {
	if o == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var err error
	if o.listener != nil {
		err = o.listener.Close(ctx)
	}
	if o.metrics != nil {
		err = errors.Join(err, o.metrics.Shutdown(ctx))
	}
	if err != nil {
		o.logger.Warn("stopping the metrics", "error", err)
	}
	return err
}
