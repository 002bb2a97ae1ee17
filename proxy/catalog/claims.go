package catalog

import (
	"fmt"

	"github.com/mcptrunk/mcptrunk/naming"
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
type Conflict struct {
	Server string `json:"server"`
	Kind   string `json:"kind"`
	Name   string `json:"name"`  // as the host would have seen it
	Owner  string `json:"owner"` // the server the name stays with
}

func (c Conflict) String() string {
	owner := fmt.Sprintf("server %q exports the same name", c.Owner)
	if c.Owner == naming.TrunkServer {
		owner = "the name is one of mcptrunk's own"
	}
	return fmt.Sprintf("server %q: %s %q is withheld: %s (a server with \"namespace\": false keeps its own names; filter one of the two out, or give one its namespace back)",
		c.Server, c.Kind, c.Name, owner)
}

// kindOf names an item of list l in messages.
var kindOf = [ListCount]string{ListTools: "tool", ListPrompts: "prompt", ListResources: "resource", ListTemplates: "resource template"}

// claims gives every exported name and URI one owner while a catalog is
// built. Only a catalog with an unprefixed server needs them: namespaced
// names cannot meet, each carries its own server.
type claims struct {
	owners    [ListCount]map[string]string
	conflicts []Conflict
}

func newClaims(p *unprefixedIndex) *claims {
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
func (c *claims) admit(l List, entries []Entry) []Entry {
	if c == nil {
		return entries
	}
	kept := entries[:0:0]
	for _, e := range entries {
		if owner, taken := c.owners[l][e.Exported]; taken && owner != e.Server {
			c.conflicts = append(c.conflicts, Conflict{Server: e.Server, Kind: kindOf[l], Name: e.Exported, Owner: owner})
			continue
		}
		c.owners[l][e.Exported] = e.Server
		kept = append(kept, e)
	}
	return kept
}
