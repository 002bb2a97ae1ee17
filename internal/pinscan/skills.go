package pinscan

import (
	"context"
	"fmt"

	"github.com/mcptrunk/mcptrunk/internal/pin"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/proxy/skills"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// snapshotSkills lists the skills of a server that declares the skills
// extension and adds what is pinned of each to now (pin.Skills: its URI,
// frontmatter and files with their digests), keyed by the skill's URI.
func snapshotSkills(ctx context.Context, c *upstream.Client, now pin.Server) error {
	if !skills.Declares(c) {
		return nil
	}
	entries, err := skills.Entries(ctx, skills.Server{Name: c.Name(), Call: c.Call})
	if err != nil {
		return fmt.Errorf("skills: %w", err)
	}
	var defs []pin.Def
	for _, e := range entries {
		uri, _ := rawjson.StringField(e, "uri")
		if uri == "" {
			return fmt.Errorf("skills: an entry without a uri")
		}
		defs = append(defs, pin.Def{Key: uri, Raw: e})
	}
	listed, err := pin.Snapshot(map[pin.Kind][]pin.Def{pin.Skills: defs})
	if err != nil {
		return err
	}
	if len(listed[pin.Skills]) > 0 {
		now[pin.Skills] = listed[pin.Skills]
	}
	return nil
}
