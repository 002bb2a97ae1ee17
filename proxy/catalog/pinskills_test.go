package catalog

import (
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/pin"
	"github.com/mcptrunk/mcptrunk/upstream"
)

func skillEntry(digest string) json.RawMessage {
	return json.RawMessage(`{"uri":"skill://pdf/SKILL.md","frontmatter":{"name":"pdf"},"resources":[{"uri":"skill://pdf/SKILL.md","digest":"` + digest + `"}]}`)
}

// A skill listed before its server's catalog was complete is recorded
// alone; the catalog's first sight then records the server's tools beside
// it rather than taking them for drift, and the skill stays pinned.
func TestSkillBeforeFirstSight(t *testing.T) {
	lockFile := filepath.Join(t.TempDir(), "mcptrunk.lock.json")
	logs := &strings.Builder{}
	warn := NewPinner(config.TrunkOptions{Pin: config.PinWarn, LockFile: lockFile}, true, slog.New(slog.NewTextHandler(logs, nil)))
	if why := warn.CheckSkill("docs", skillEntry("sha256:1")); why != "" {
		t.Fatalf("warn withheld a skill: %s", why)
	}
	tool := upstream.Item{Key: "search", Raw: json.RawMessage(`{"name":"search","description":"searches","inputSchema":{"type":"object"}}`)}
	warn.admit("docs", upstream.Catalog{Tools: []upstream.Item{tool}}, nil, true)
	lock, err := pin.Read(lockFile)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := lock.Servers["docs"][pin.Tools]["search"]; !ok || len(lock.Servers["docs"][pin.Skills]) != 1 {
		t.Errorf("the lockfile's docs: %+v; want its tool recorded beside its skill", lock.Servers["docs"])
	}
	if st := warn.Report().Servers["docs"]; len(st.Drift) != 0 {
		t.Errorf("the first sight of the catalog was taken for drift: %+v", st.Drift)
	}
	enforce := NewPinner(config.TrunkOptions{Pin: config.PinEnforce, LockFile: lockFile}, false, slog.New(slog.DiscardHandler))
	if why := enforce.CheckSkill("docs", skillEntry("sha256:1")); why != "" {
		t.Errorf("enforce withheld the skill pinned: %s", why)
	}
	if why := enforce.CheckSkill("docs", skillEntry("sha256:2")); !strings.Contains(why, "not the one pinned") {
		t.Errorf("enforce on a changed skill: %q", why)
	}
}
