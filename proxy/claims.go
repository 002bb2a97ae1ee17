package proxy

import (
	"fmt"
	"log/slog"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/naming"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// Claims: with a server that keeps its own names ("namespace": false, see
// unprefixed.go), two servers can export the same name or URI, which
// namespaced names never do (each carries its server). Each exported name
// then has one owner, decided as the catalog is built: the trunk's own
// items first, then the servers in name order. A later server's item of a
// name already taken is withheld and reported as a conflict, so that no
// request can reach the server the host did not see listed.

// conflict is an item withheld from a server because an earlier one (or
// the trunk) exports the same name or URI.
type conflict struct {
	Server string `json:"server"`
	Kind   string `json:"kind"`
	Name   string `json:"name"`  // as the host would have seen it
	Owner  string `json:"owner"` // the server the name stays with
}

func (c conflict) String() string {
	owner := fmt.Sprintf("server %q exports the same name", c.Owner)
	if c.Owner == naming.TrunkServer {
		owner = "the name is one of mcptrunk's own"
	}
	return fmt.Sprintf("server %q: %s %q is withheld: %s (a server with \"namespace\": false keeps its own names; filter one of the two out, or give one its namespace back)",
		c.Server, c.Kind, c.Name, owner)
}

// kindOf names an item of list l in messages.
var kindOf = [listCount]string{listTools: "tool", listPrompts: "prompt", listResources: "resource", listTemplates: "resource template"}

// claims gives every exported name and URI one owner while a catalog is
// built. Only a catalog with an unprefixed server needs them: namespaced
// names cannot meet, each carries its own server.
type claims struct {
	owners    [listCount]map[string]string
	conflicts []conflict
}

func newClaims(p *plainIndex) *claims {
	if p == nil {
		return nil
	}
	c := &claims{}
	for l := range c.owners {
		c.owners[l] = map[string]string{}
	}
	return c
}

// admit returns the entries of list l whose names are still free, and
// claims them; each of the others is a conflict.
func (c *claims) admit(l list, entries []entry) []entry {
	if c == nil {
		return entries
	}
	kept := entries[:0:0]
	for _, e := range entries {
		if owner, taken := c.owners[l][e.exported]; taken && owner != e.server {
			c.conflicts = append(c.conflicts, conflict{Server: e.server, Kind: kindOf[l], Name: e.exported, Owner: owner})
			continue
		}
		c.owners[l][e.exported] = e.server
		kept = append(kept, e)
	}
	return kept
}

// ConflictLines builds the catalog of the listed clients, as serve would,
// and describes each item it withholds for a name two servers claim, one
// line each, for mcptrunk check. None when no server is unprefixed.
func ConflictLines(o config.TrunkOptions, clients []*upstream.Client) []string {
	cat := buildCatalog(clients, policyOf(o), nil, slog.New(slog.DiscardHandler))
	lines := make([]string, 0, len(cat.conflicts))
	for _, c := range cat.conflicts {
		lines = append(lines, "names: "+c.String())
	}
	return lines
}
