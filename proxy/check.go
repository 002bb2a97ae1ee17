package proxy

import (
	"log/slog"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/proxy/catalog"
	"github.com/mcptrunk/mcptrunk/proxy/trunktools"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// The catalog is built from values (catalog.Server), read from the clients
// at the moment of a build: what mcptrunk check and every rebuild share.

// catalogServers reads each client's name, spec, items and state for a
// catalog build. Items are read for every server: pinning looks at the names of all of them.
func catalogServers(clients []*upstream.Client) []catalog.Server {
	out := make([]catalog.Server, len(clients))
	for i, c := range clients {
		out[i] = catalog.Server{Name: c.Name(), Spec: c.Spec(), Listed: c.Listed(), Settled: isClosed(c.Settled()), Items: c.Catalog()}
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

// buildFrom builds the catalog of clients with the trunk's own items.
func buildFrom(clients []*upstream.Client, pol catalog.Policy, pins *catalog.Pinner, logger *slog.Logger) *catalog.Catalog {
	own, ownRes := trunktools.Entries(pol)
	return catalog.Build(catalog.Input{Servers: catalogServers(clients), Policy: pol, Pins: pins, OwnTools: own, OwnResources: ownRes, Logger: logger})
}

// ConflictLines builds the catalog of the listed clients, as serve would,
// and describes each item it withholds for a name two servers claim, one
// line each, for mcptrunk check. None when no server is unprefixed.
func ConflictLines(o config.TrunkOptions, clients []*upstream.Client) []string {
	cat := buildFrom(clients, catalog.PolicyOf(o), nil, slog.New(slog.DiscardHandler))
	lines := make([]string, 0, len(cat.Conflicts))
	for _, c := range cat.Conflicts {
		lines = append(lines, "names: "+c.String())
	}
	return lines
}

// PinLines holds the listed clients against the lockfile, recording
// nothing, and describes what pinning finds, one line per item, for
// mcptrunk check. The first line says the mode and the lockfile.
func PinLines(o config.TrunkOptions, clients []*upstream.Client, logger *slog.Logger) []string {
	return catalog.PinLines(o, catalogServers(clients), logger)
}
