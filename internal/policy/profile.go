package policy

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// Profile is a named view of the trunk (trunk.profiles): the servers it
// shows and, of their tools, those whose names match one of the globs.
// Prompts, resources and templates of its servers are all shown. An empty
// list means no restriction on that side.
type Profile struct {
	Description string   `json:"description,omitempty"`
	Servers     []string `json:"servers,omitempty"`
	// Tools are path.Match globs over a tool's name at its server
	// ("get_*"), or over "<server>/<name>" when they hold a slash
	// ("github/search_*").
	Tools []string `json:"tools,omitempty"`
}

// Check reports the first glob that path.Match cannot read.
func (p Profile) Check() error {
	for i, g := range p.Tools {
		if _, err := path.Match(g, ""); err != nil {
			return fmt.Errorf("tools[%d]: %q is not a glob: %v", i, g, err)
		}
	}
	return nil
}

// Admits reports whether the profile shows the item.
func (p Profile) Admits(it Item) bool {
	if len(p.Servers) > 0 && !slices.Contains(p.Servers, it.Server) {
		return false
	}
	if it.Kind != "tool" || len(p.Tools) == 0 {
		return true
	}
	for _, g := range p.Tools {
		subject := it.Name
		if strings.Contains(g, "/") {
			subject = it.Server + "/" + it.Name
		}
		if ok, _ := path.Match(g, subject); ok {
			return true
		}
	}
	return false
}
