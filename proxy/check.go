package proxy

import (
	"log/slog"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/proxy/catalog"
	"github.com/mcptrunk/mcptrunk/proxy/trunktools"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// The catalog is built from values (catalog.ServersOf), read from the
// clients at the moment of a build.

// buildFrom builds the catalog of clients with the trunk's own items.
func buildFrom(clients []*upstream.Client, pol catalog.Policy, pins *catalog.Pinner, logger *slog.Logger) *catalog.Catalog {
	own, ownRes := trunktools.Entries(pol)
	return catalog.Build(catalog.Input{Servers: catalog.ServersOf(clients), Policy: pol, Pins: pins, OwnTools: own, OwnResources: ownRes, Logger: logger})
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
	return catalog.PinLines(o, catalog.ServersOf(clients), logger)
}
