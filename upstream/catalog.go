package upstream

import (
	"encoding/json"
	"errors"
	"fmt"
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

// maxPages bounds how many pages of one list are followed, so a server that
// hands out cursors forever cannot hold discovery hostage.
const maxPages = 1000

// listPage is one page of a list result.
type listPage struct {
	items      []json.RawMessage
	nextCursor string
}

// parsePage decodes one page of a list result, keeping its items raw.
func parsePage(s surface, raw json.RawMessage) (listPage, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return listPage{}, fmt.Errorf("decoding %s result: %w", surfaces[s].method, err)
	}
	var p listPage
	if arr, ok := fields[surfaces[s].field]; ok && string(arr) != "null" {
		if err := json.Unmarshal(arr, &p.items); err != nil {
			return listPage{}, fmt.Errorf("decoding %s result: field %q: %w", surfaces[s].method, surfaces[s].field, err)
		}
	}
	if cur, ok := fields["nextCursor"]; ok && string(cur) != "null" {
		if err := json.Unmarshal(cur, &p.nextCursor); err != nil {
			return listPage{}, fmt.Errorf("decoding %s result: field \"nextCursor\": %w", surfaces[s].method, err)
		}
	}
	return p, nil
}

// itemKey reads the identifying field of an item.
func itemKey(s surface, raw json.RawMessage) (string, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return "", err
	}
	var key string
	if err := json.Unmarshal(fields[surfaces[s].key], &key); err != nil || key == "" {
		return "", errors.New("missing " + surfaces[s].key)
	}
	return key, nil
}
