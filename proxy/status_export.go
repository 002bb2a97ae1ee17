package proxy

import "github.com/mcptrunk/mcptrunk/proxy/observe"

// Status reports the trunk's servers and counters now.
func (t *Trunk) Status() observe.Status {
	st := t.state.Load()
	r := t.statusReport(st)
	s := observe.Status{Servers: r.Servers, DroppedNotifications: r.DroppedNotifications, ParkedCalls: r.ParkedCalls,
		Sessions: t.sessions(), Pins: map[string]observe.PinCounts{}, Profiles: st.access.Profiles()}
	if t.store != nil && t.store.Info().Kind != "memory" {
		info, health := t.store.Info(), t.store.Status()
		s.Store = &observe.StoreStatus{Kind: info.Kind, Where: info.Where, Up: health.Up, Since: health.Since, Error: health.Error}
	}
	if r.Pinning != nil {
		s.PinMode = r.Pinning.Mode
		for server, st := range r.Pinning.Servers {
			s.Pins[server] = observe.PinCounts{Drift: len(st.Drift), Withheld: len(st.Withheld), Findings: len(st.Findings)}
		}
	}
	return s
}

// sessions counts the host sessions attached, not the stateless requests
// being answered.
func (t *Trunk) sessions() int {
	n := 0
	for _, s := range t.hosts.all() {
		if !s.perRequest {
			n++
		}
	}
	return n
}
