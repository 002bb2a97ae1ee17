package main

// The official MCP conformance suite's server scenarios: how their results
// are read and how a run through the trunk is judged against a direct one.

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// The comparison holds against the trunk exactly the scenarios that pass
// directly and not through it, a missing result included; a warning fails
// no scenario, and more of them through the trunk are only listed.
func TestConformanceCompare(t *testing.T) {
	pass := scenarioResult{passed: 2}
	fail := scenarioResult{passed: 1, failed: 1, failures: []string{"x: wrong"}}
	warn := scenarioResult{passed: 2, warnings: []string{"y: should"}}
	direct := map[string]scenarioResult{"a": pass, "b": pass, "c": pass, "d": fail, "e": fail, "f": pass, "h": warn}
	through := map[string]scenarioResult{"a": pass, "b": fail, "d": pass, "e": fail, "f": warn, "g": fail, "h": warn}
	got := compareSuite(direct, through)
	want := suiteDiff{regressed: []string{"b", "c"}, failedDirect: []string{"d", "e"}, gained: []string{"d"}, warnedMore: []string{"f"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("compareSuite = %+v, want %+v", got, want)
	}
	if n := passCount(through); n != 4 {
		t.Errorf("passCount = %d, want 4", n)
	}
}

// The suite's results are read from each scenario's checks.json, named by
// its folder; a failure keeps its check's id and message.
func TestConformanceReadResults(t *testing.T) {
	dir := t.TempDir()
	write := func(folder, checks string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(dir, folder), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, folder, "checks.json"), []byte(checks), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("server-tools-call-with-progress-2026-12-02T05-10-22-094Z",
		`[{"id":"a","status":"SUCCESS"},{"id":"progress","status":"FAILURE","errorMessage":"no\nprogress"},{"id":"i","status":"INFO"}]`)
	write("server-ping-2026-12-02T05-10-22-070Z", `[{"id":"ping","status":"SUCCESS"},{"id":"w","status":"WARNING","description":"slow"}]`)
	write("server-tasks-status-notifications-2026-12-02T05-10-23-001Z", `[]`)
	write("not-a-scenario", `[]`)
	got, err := readSuiteResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]scenarioResult{
		"tools-call-with-progress":   {passed: 1, failed: 1, failures: []string{"progress: no progress"}},
		"ping":                       {passed: 1, warnings: []string{"w: slow"}},
		"tasks-status-notifications": {},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("readSuiteResults = %+v, want %+v", got, want)
	}
	if got["tools-call-with-progress"].ok() || !got["ping"].ok() || !got["tasks-status-notifications"].ok() {
		t.Errorf("only a failed check fails a scenario: a warning or no check at all passes it")
	}

	write("server-ping-2026-12-02T05-11-00-000Z", `[]`)
	if _, err := readSuiteResults(dir); err == nil {
		t.Error("two result folders for one scenario were accepted")
	}
}
