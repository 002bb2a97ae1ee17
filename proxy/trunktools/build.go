package trunktools

import (
	"log/slog"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/proxy/catalog"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// Build builds the catalog of clients with the trunk's own items: the
// catalog the trunk serves.
func Build(clients []*upstream.Client, pol catalog.Policy, pins *catalog.Pinner, logger *slog.Logger) *catalog.Catalog {
	own, ownRes := Entries(pol)
	return catalog.Build(catalog.Input{Servers: catalog.ServersOf(clients), Policy: pol, Pins: pins, OwnTools: own, OwnResources: ownRes, Logger: logger})
}

// ConflictLines builds the catalog of the listed clients, as serve would,
// and describes each item it withholds for a name two servers claim, one
// line each, for mcptrunk check. None when no server is unprefixed.
func ConflictLines(o config.TrunkOptions, clients []*upstream.Client) []string {
	cat := Build(clients, catalog.PolicyOf(o), nil, slog.New(slog.DiscardHandler))
	lines := make([]string, 0, len(cat.Conflicts))
	for _, c := range cat.Conflicts {
		lines = append(lines, "names: "+c.String())
	}
	return lines
}
