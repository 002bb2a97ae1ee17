package upstream

import (
	"encoding/json"

	"github.com/mcptrunk/mcptrunk/upstream/listpage"
)

// Item is one entry of a server's list (a tool, prompt, resource or
// resource template), kept exactly as the server sent it. Key is what
// identifies it: the name of a tool or prompt, the uri of a resource, the
// uriTemplate of a template.
type Item struct {
	Key string
	Raw json.RawMessage
}

// Catalog is everything a server offers, in the order the server listed it.
type Catalog struct {
	Tools, Prompts, Resources, Templates []Item
	// Relisted counts, per list in the order above, the reads of that list
	// the server asked for with a list_changed over the Client's life. A
	// list read again the same (a tool registered again under its name)
	// still counts: its hosts are owed the notification the server sent.
	Relisted [4]uint64
}

// surface is one of the four lists a server can offer.
type surface int

const (
	surfaceTools surface = iota
	surfacePrompts
	surfaceResources
	surfaceTemplates
	surfaceCount
)

// surfaceSpec says how a list is requested and read.
type surfaceSpec struct {
	method string // the list request
	field  string // the result's array
	key    string // the field identifying an item
}

var surfaces = [surfaceCount]surfaceSpec{
	surfaceTools:     {"tools/list", "tools", "name"},
	surfacePrompts:   {"prompts/list", "prompts", "name"},
	surfaceResources: {"resources/list", "resources", "uri"},
	surfaceTemplates: {"resources/templates/list", "resourceTemplates", "uriTemplate"},
}

func (s surface) String() string { return surfaces[s].field }

func (c *Catalog) list(s surface) *[]Item {
	switch s {
	case surfaceTools:
		return &c.Tools
	case surfacePrompts:
		return &c.Prompts
	case surfaceResources:
		return &c.Resources
	default:
		return &c.Templates
	}
}

// itemKey reads the identifying field of an item of list s.
func itemKey(s surface, raw json.RawMessage) (string, error) {
	return listpage.Key(surfaces[s].key, raw)
}
