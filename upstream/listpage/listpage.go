// Package listpage reads the pages of MCP's list requests (tools/list,
// prompts/list, resources/list, resources/templates/list): one page's items,
// kept as the server sent them, its cursor, and the field that identifies
// an item. Pure: the Client (upstream) asks for the pages and keeps the
// items; the catalog cache's entries are read back with Key too.
package listpage

import (
	"encoding/json"
	"errors"
	"fmt"
)

// MaxPages bounds how many pages of one list are followed, so a server
// that hands out cursors forever cannot hold discovery hostage.
const MaxPages = 1000

// Page is one page of a list result.
type Page struct {
	Items      []json.RawMessage
	NextCursor string
}

// Parse decodes one page of the result of list request method, whose items
// are the array field, keeping each item raw.
func Parse(method, field string, raw json.RawMessage) (Page, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return Page{}, fmt.Errorf("decoding %s result: %w", method, err)
	}
	var p Page
	if arr, ok := fields[field]; ok && string(arr) != "null" {
		if err := json.Unmarshal(arr, &p.Items); err != nil {
			return Page{}, fmt.Errorf("decoding %s result: field %q: %w", method, field, err)
		}
	}
	if cur, ok := fields["nextCursor"]; ok && string(cur) != "null" {
		if err := json.Unmarshal(cur, &p.NextCursor); err != nil {
			return Page{}, fmt.Errorf("decoding %s result: field \"nextCursor\": %w", method, err)
		}
	}
	return p, nil
}

// Key reads an item's identifying field (a tool's or prompt's name, a
// resource's uri, a template's uriTemplate), which must be a non-empty
// string.
func Key(field string, item json.RawMessage) (string, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(item, &fields); err != nil {
		return "", err
	}
	var key string
	if err := json.Unmarshal(fields[field], &key); err != nil || key == "" {
		return "", errors.New("missing " + field)
	}
	return key, nil
}
