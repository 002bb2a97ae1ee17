package catalog

import "github.com/mcptrunk/mcptrunk/upstream"

// ServersOf reads each client's name, spec, items and state for a build,
// at the moment of the call: what mcptrunk check and every rebuild of the
// trunk share. Items are read for every server: pinning looks at the
// names of all of them.
func ServersOf(clients []*upstream.Client) []Server {
	out := make([]Server, len(clients))
	for i, c := range clients {
		out[i] = Server{Name: c.Name(), Spec: c.Spec(), Listed: c.Listed(), Settled: isClosed(c.Settled()), Items: c.Catalog()}
	}
	return out
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
	}
	return false
}
