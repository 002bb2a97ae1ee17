package main

import (
	"strings"
	"testing"
	"time"
)

// TestCheckUnprefixedConflict: notes and weather, both with "namespace":
// false, each have a tool called search; mcptrunk check says that
// weather's is withheld, notes (first in name order) keeping the name.
// What the host sees of such servers is tested in proxy
// (TestUnprefixedAnswersVerbatim, TestUnprefixedCatalogAndRouting).
func TestCheckUnprefixedConflict(t *testing.T) {
	t.Parallel()
	notesEntry, weatherEntry := notesServer(), weatherServer()
	notesEntry["namespace"], weatherEntry["namespace"] = false, false
	cfg := writeConfig(t, map[string]server{"notes": notesEntry, "weather": weatherEntry}, nil)
	const withheld = `server "weather": tool "search" is withheld: server "notes" exports the same name`
	out, errOut, code := runCLI(t, 60*time.Second, "check", "--config", cfg)
	if code != 0 || !strings.Contains(out, "names: "+withheld) {
		t.Errorf("mcptrunk check: exit %d, want 0 and a line saying %q:\n%s\n%s", code, withheld, out, errOut)
	}
}
