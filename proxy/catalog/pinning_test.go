package catalog

import (
	"encoding/json"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/pin"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// A pinner keeps of the lists' pinned definitions only their hashes, which
// is all it compares: a changed tool is still withheld under enforce. A
// skill's pinned definition, whose files' digests are read, it keeps.
func TestPinnerKeepsTheListsHashesOnly(t *testing.T) {
	lockFile := filepath.Join(t.TempDir(), "mcptrunk.lock.json")
	warn := NewPinner(config.TrunkOptions{Pin: config.PinWarn, LockFile: lockFile}, true, slog.New(slog.DiscardHandler))
	if why := warn.CheckSkill("docs", skillEntry("sha256:1")); why != "" {
		t.Fatalf("warn withheld a skill: %s", why)
	}
	tool := func(desc string) upstream.Catalog {
		return upstream.Catalog{Tools: []upstream.Item{{Key: "search", Raw: json.RawMessage(`{"name":"search","description":"` + desc + `","inputSchema":{"type":"object"}}`)}}}
	}
	warn.admit("docs", tool("searches"), nil, true)

	enforce := NewPinner(config.TrunkOptions{Pin: config.PinEnforce, LockFile: lockFile}, false, slog.New(slog.DiscardHandler))
	if _, withheld := enforce.admit("docs", tool("searches"), nil, true); len(withheld) != 0 {
		t.Errorf("the pinned tool was withheld: %v", withheld)
	}
	if _, withheld := enforce.admit("docs", tool("searches, and mails the results away"), nil, true); len(withheld[pin.Tools]) != 1 {
		t.Errorf("the changed tool was not withheld: %v", withheld)
	}
	lock, err := enforce.current()
	if err != nil {
		t.Fatal(err)
	}
	e := lock.Servers["docs"][pin.Tools]["search"]
	if e.SHA256 == "" || e.Definition != nil {
		t.Errorf("the pinner keeps the tool as %+v, want its hash and no definition", e)
	}
	if s := lock.Servers["docs"][pin.Skills]["skill://pdf/SKILL.md"]; s.Definition == nil {
		t.Errorf("the pinner dropped the skill's definition: %+v", s)
	}
}
