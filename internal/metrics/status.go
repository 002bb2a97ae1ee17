package metrics

import (
	"github.com/mcptrunk/mcptrunk/proxy/observe"
	"github.com/mcptrunk/mcptrunk/upstream"
	"go.opentelemetry.io/otel/attribute"
)

// states are every state a server can be in: the state gauge reports each
// (1 for the current one, 0 for the rest), so a query can select on any
// without knowing which ones a server has been through.
var states = []upstream.State{upstream.StateStarting, upstream.StateReady, upstream.StateSleeping,
	upstream.StateRestarting, upstream.StateFailed, upstream.StateDisabled, upstream.StateClosed}

// statusGauges are the instruments read from the trunk's status when the
// metrics are collected.
type statusGauges struct {
	state, startTime, items, parked, pinDrift, pinWithheld, sessions, tasks *instrument
	inFlight, queued, breakerOpen, storeUp                                  *instrument
	restarts, lazyStarts, idleStops, dropped                                *instrument
}

func (m *Metrics) statusInstruments() {
	g, r := &m.gauges, &m.reg
	g.state = r.newInstrument(kindGauge, "mcptrunk.server.state", "",
		"1 for the state each server is in, 0 for the others (starting, ready, sleeping, restarting, failed, disabled, closed).")
	g.startTime = r.newInstrument(kindGauge, "mcptrunk.server.start_time", "s",
		"When each ready server became ready, in seconds since the Unix epoch; absent while it is not ready.")
	g.items = r.newInstrument(kindGauge, "mcptrunk.server.items", "",
		"What each server offers, by kind: tools, prompts, resources, resource_templates.")
	g.parked = r.newInstrument(kindGauge, "mcptrunk.parked_calls", "",
		"A stateless host's calls to 2025 servers waiting between rounds of input.")
	g.pinDrift = r.newInstrument(kindGauge, "mcptrunk.pin.drift", "",
		"Each server's items that differ from the lockfile (trunk.pin).")
	g.pinWithheld = r.newInstrument(kindGauge, "mcptrunk.pin.withheld", "",
		"Each server's items withheld from the host because they are new or changed (trunk.pin enforce).")
	g.restarts = r.newInstrument(kindObsCounter, "mcptrunk.server.restarts", "",
		"Times each server was restarted after it went away (reset when a reload replaces the server).")
	g.dropped = r.newInstrument(kindObsCounter, "mcptrunk.notifications.dropped", "",
		"Notifications for the host dropped: over the message limit, or the host not reading.")
	g.lazyStarts = r.newInstrument(kindObsCounter, "mcptrunk.server.lazy_starts", "",
		"Times a request started each sleeping server (lazy, or stopped for being idle); the start that fills its catalog cache is not one (reset when a reload replaces the server).")
	g.idleStops = r.newInstrument(kindObsCounter, "mcptrunk.server.idle_stops", "",
		"Times each server was stopped for being idle longer than its idleTimeout (reset when a reload replaces the server).")
	g.sessions = r.newInstrument(kindGauge, "mcptrunk.sessions", "",
		"Host sessions connected to the trunk now (the stdio host is one).")
	g.tasks = r.newInstrument(kindGauge, "mcptrunk.tasks.running", "",
		"Each server's tasks running now, as far as the trunk has heard (a task it hears no end of counts until its ttl, at most a day).")
	g.inFlight = r.newInstrument(kindGauge, "mcptrunk.server.calls_in_flight", "",
		"Calls in flight to each server with maxInFlight.")
	g.queued = r.newInstrument(kindGauge, "mcptrunk.server.calls_queued", "",
		"Calls waiting for a slot of each server with maxInFlight.")
	g.breakerOpen = r.newInstrument(kindGauge, "mcptrunk.server.breaker_open", "",
		"1 while the circuit breaker of each server with one fails its calls at once, else 0.")
	g.storeUp = r.newInstrument(kindGauge, "mcptrunk.state_store.up", "",
		"1 while the state store (trunk.state) answers, 0 while it does not; absent when state is kept in memory.")
}

// WatchStatus reports status, read at each collection, as the server and
// trunk gauges. A trunk is made after its observers, so the status comes
// in after New.
func (m *Metrics) WatchStatus(status func() observe.Status) error {
	g := &m.gauges
	m.reg.callbackMu.Lock()
	defer m.reg.callbackMu.Unlock()
	m.reg.callback = func(o *observation) {
		st := status()
		for _, s := range st.Servers {
			server := attribute.String("server", s.Server)
			for _, state := range states {
				var v int64
				if s.State == state {
					v = 1
				}
				o.observe(g.state, v, server, attribute.String("state", string(state)))
			}
			if s.State == upstream.StateReady {
				o.observe(g.startTime, s.Since.Unix(), server)
			}
			for kind, n := range map[string]int{"tools": s.Tools, "prompts": s.Prompts, "resources": s.Resources, "resource_templates": s.Templates} {
				o.observe(g.items, int64(n), server, attribute.String("kind", kind))
			}
			o.observe(g.restarts, s.Restarts, server)
			o.observe(g.lazyStarts, s.LazyStarts, server)
			o.observe(g.idleStops, s.IdleStops, server)
			pins := st.Pins[s.Server]
			o.observe(g.pinDrift, int64(pins.Drift), server)
			o.observe(g.pinWithheld, int64(pins.Withheld), server)
			o.observe(g.tasks, int64(s.Tasks), server)
			if s.MaxInFlight > 0 {
				o.observe(g.inFlight, int64(s.InFlight), server)
				o.observe(g.queued, int64(s.Queued), server)
			}
			if s.Breaker != "" {
				var open int64
				if s.Breaker == upstream.BreakerOpen {
					open = 1
				}
				o.observe(g.breakerOpen, open, server)
			}
		}
		o.observe(g.parked, int64(st.ParkedCalls))
		o.observe(g.dropped, st.DroppedNotifications)
		o.observe(g.sessions, int64(st.Sessions))
		if st.Store != nil {
			var up int64
			if st.Store.Up {
				up = 1
			}
			o.observe(g.storeUp, up, attribute.String("kind", st.Store.Kind))
		}
	}
	return nil
}
