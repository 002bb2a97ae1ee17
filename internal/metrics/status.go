package metrics

import (
	"context"
	"errors"

	"github.com/mcptrunk/mcptrunk/proxy/observe"
	"github.com/mcptrunk/mcptrunk/upstream"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// states are every state a server can be in: the state gauge reports each
// (1 for the current one, 0 for the rest), so a query can select on any
// without knowing which ones a server has been through.
var states = []upstream.State{upstream.StateStarting, upstream.StateReady, upstream.StateSleeping,
	upstream.StateRestarting, upstream.StateFailed, upstream.StateDisabled, upstream.StateClosed}

// statusGauges are the instruments read from the trunk's status when the
// metrics are collected.
type statusGauges struct {
	state, startTime, items, parked, pinDrift, pinWithheld, sessions, tasks metric.Int64ObservableGauge
	inFlight, queued, breakerOpen, storeUp                                  metric.Int64ObservableGauge
	restarts, lazyStarts, idleStops, dropped                                metric.Int64ObservableCounter
}

func (m *Metrics) statusInstruments() error {
	g := &m.gauges
	var errs [16]error
	g.state, errs[0] = m.meter.Int64ObservableGauge("mcptrunk.server.state",
		metric.WithDescription("1 for the state each server is in, 0 for the others (starting, ready, sleeping, restarting, failed, disabled, closed)."))
	g.startTime, errs[1] = m.meter.Int64ObservableGauge("mcptrunk.server.start_time", metric.WithUnit("s"),
		metric.WithDescription("When each ready server became ready, in seconds since the Unix epoch; absent while it is not ready."))
	g.items, errs[2] = m.meter.Int64ObservableGauge("mcptrunk.server.items",
		metric.WithDescription("What each server offers, by kind: tools, prompts, resources, resource_templates."))
	g.parked, errs[3] = m.meter.Int64ObservableGauge("mcptrunk.parked_calls",
		metric.WithDescription("A stateless host's calls to legacy servers waiting between rounds of input."))
	g.pinDrift, errs[4] = m.meter.Int64ObservableGauge("mcptrunk.pin.drift",
		metric.WithDescription("Each server's items that differ from the lockfile (trunk.pin)."))
	g.pinWithheld, errs[5] = m.meter.Int64ObservableGauge("mcptrunk.pin.withheld",
		metric.WithDescription("Each server's items withheld from the host because they are new or changed (trunk.pin enforce)."))
	g.restarts, errs[6] = m.meter.Int64ObservableCounter("mcptrunk.server.restarts",
		metric.WithDescription("Times each server was restarted after it went away (reset when a reload replaces the server)."))
	g.dropped, errs[7] = m.meter.Int64ObservableCounter("mcptrunk.notifications.dropped",
		metric.WithDescription("Notifications for the host dropped: over the message limit, or the host not reading."))
	g.lazyStarts, errs[8] = m.meter.Int64ObservableCounter("mcptrunk.server.lazy_starts",
		metric.WithDescription("Times a request started each sleeping server (lazy, or stopped for being idle); the start that fills its catalog cache is not one (reset when a reload replaces the server)."))
	g.idleStops, errs[9] = m.meter.Int64ObservableCounter("mcptrunk.server.idle_stops",
		metric.WithDescription("Times each server was stopped for being idle longer than its idleTimeout (reset when a reload replaces the server)."))
	g.sessions, errs[10] = m.meter.Int64ObservableGauge("mcptrunk.sessions",
		metric.WithDescription("Host sessions connected to the trunk now (the stdio host is one)."))
	g.tasks, errs[11] = m.meter.Int64ObservableGauge("mcptrunk.tasks.running",
		metric.WithDescription("Each server's tasks running now, as far as the trunk has heard (a task it hears no end of counts until its ttl, at most a day)."))
	g.inFlight, errs[12] = m.meter.Int64ObservableGauge("mcptrunk.server.calls_in_flight",
		metric.WithDescription("Calls in flight to each server with maxInFlight."))
	g.queued, errs[13] = m.meter.Int64ObservableGauge("mcptrunk.server.calls_queued",
		metric.WithDescription("Calls waiting for a slot of each server with maxInFlight."))
	g.breakerOpen, errs[14] = m.meter.Int64ObservableGauge("mcptrunk.server.breaker_open",
		metric.WithDescription("1 while the circuit breaker of each server with one fails its calls at once, else 0."))
	g.storeUp, errs[15] = m.meter.Int64ObservableGauge("mcptrunk.state_store.up",
		metric.WithDescription("1 while the state store (trunk.state) answers, 0 while it does not; absent when state is kept in memory."))
	return errors.Join(errs[:]...)
}

// WatchStatus reports status, read at each collection, as the server and
// trunk gauges. A trunk is made after its observers, so the status comes
// in after New.
func (m *Metrics) WatchStatus(status func() observe.Status) error {
	g := &m.gauges
	reg, err := m.meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		st := status()
		for _, s := range st.Servers {
			server := attribute.String("server", s.Server)
			for _, state := range states {
				var v int64
				if s.State == state {
					v = 1
				}
				o.ObserveInt64(g.state, v, metric.WithAttributes(server, attribute.String("state", string(state))))
			}
			if s.State == upstream.StateReady {
				o.ObserveInt64(g.startTime, s.Since.Unix(), metric.WithAttributes(server))
			}
			for kind, n := range map[string]int{"tools": s.Tools, "prompts": s.Prompts, "resources": s.Resources, "resource_templates": s.Templates} {
				o.ObserveInt64(g.items, int64(n), metric.WithAttributes(server, attribute.String("kind", kind)))
			}
			o.ObserveInt64(g.restarts, s.Restarts, metric.WithAttributes(server))
			o.ObserveInt64(g.lazyStarts, s.LazyStarts, metric.WithAttributes(server))
			o.ObserveInt64(g.idleStops, s.IdleStops, metric.WithAttributes(server))
			pins := st.Pins[s.Server]
			o.ObserveInt64(g.pinDrift, int64(pins.Drift), metric.WithAttributes(server))
			o.ObserveInt64(g.pinWithheld, int64(pins.Withheld), metric.WithAttributes(server))
			o.ObserveInt64(g.tasks, int64(s.Tasks), metric.WithAttributes(server))
			if s.MaxInFlight > 0 {
				o.ObserveInt64(g.inFlight, int64(s.InFlight), metric.WithAttributes(server))
				o.ObserveInt64(g.queued, int64(s.Queued), metric.WithAttributes(server))
			}
			if s.Breaker != "" {
				var open int64
				if s.Breaker == upstream.BreakerOpen {
					open = 1
				}
				o.ObserveInt64(g.breakerOpen, open, metric.WithAttributes(server))
			}
		}
		o.ObserveInt64(g.parked, int64(st.ParkedCalls))
		o.ObserveInt64(g.dropped, st.DroppedNotifications)
		o.ObserveInt64(g.sessions, int64(st.Sessions))
		if st.Store != nil {
			var up int64
			if st.Store.Up {
				up = 1
			}
			o.ObserveInt64(g.storeUp, up, metric.WithAttributes(attribute.String("kind", st.Store.Kind)))
		}
		return nil
	}, g.state, g.startTime, g.items, g.parked, g.pinDrift, g.pinWithheld, g.sessions, g.tasks, g.restarts, g.lazyStarts, g.idleStops, g.dropped,
		g.inFlight, g.queued, g.breakerOpen, g.storeUp)
	if err != nil {
		return err
	}
	m.status = reg
	return nil
}
