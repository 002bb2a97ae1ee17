package main

// The official MCP conformance suite's server scenarios, run against
// go-sdk's conformance everything-server twice: directly over streamable
// HTTP, and through `mcptrunk serve --http` with the same server mounted as
// a stdio upstream whose names and URIs are exported unchanged. Every
// scenario that passes directly must pass through the trunk; those that
// fail directly are listed, not held against it.

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// suiteRevisions are the revisions whose requirement sets the suite runs
// (each at its own wire: an initialize handshake at 2025-11-25, stateless
// requests at 2026-07-28), each with the everything-server mode that
// passes the most of it directly. With sessions, the server passes every
// scenario of the 2025-11-25 set, and stateless it fails the four that
// need a session (sampling and elicitation); stateless, it passes every
// scored scenario of the 2026-07-28 set, which with sessions it all but
// entirely fails. The trunk serves both revisions at one URL.
var suiteRevisions = []struct {
	revision  string
	stateless bool
}{
	{"2025-11-25", false},
	{"2026-07-28", true},
}

func TestConformanceSuite(t *testing.T) {
	t.Parallel()
	bin := conformanceBin(t)
	node, cli := suiteNode(t), npmConformanceCLI(t)
	for _, rev := range suiteRevisions {
		t.Run(rev.revision, func(t *testing.T) {
			t.Parallel()
			// The upstream is configured as the server runs directly: left
			// to negotiate for the 2025-11-25 run (a shared trunk speaks
			// 2025-11-25 to it, so its requests mid-call exist), pinned to
			// 2026-07-28 for the stateless run (each request then carries
			// the client's own capabilities, and input requests keep the
			// server's keys).
			up := server{"command": bin, "namespace": false, "timeouts": slowTimeouts}
			if rev.stateless {
				up = pinStateless(up)
			}
			cfg := writeConfig(t, map[string]server{"conformance": up}, nil)
			ctx := testCtx(t, 5*time.Minute)
			directURL := startConformanceHTTP(t, ctx, bin, rev.stateless)
			trunk := startHTTPTrunk(t, ctx, cfg)

			// The two runs share nothing: run them at once.
			var direct, through suiteRun
			var directErr, throughErr error
			dir := t.TempDir()
			var wg sync.WaitGroup
			wg.Go(func() {
				direct, directErr = runSuite(ctx, node, cli, directURL, rev.revision, suiteDir(t, dir, "direct"))
			})
			wg.Go(func() {
				through, throughErr = runSuite(ctx, node, cli, trunk.url, rev.revision, suiteDir(t, dir, "trunk"))
			})
			wg.Wait()
			if directErr != nil {
				t.Fatalf("directly: %v", directErr)
			}
			if throughErr != nil {
				t.Fatalf("through mcptrunk: %v", throughErr)
			}
			reportSuite(t, rev.revision, direct, through, trunk)
		})
	}
}

// reportSuite logs the pass counts side by side and fails t for each
// scenario that passes directly but not through the trunk, unless it is a
// known gap failing exactly its known checks, and for each known gap that
// is one no longer.
func reportSuite(t *testing.T, revision string, direct, through suiteRun, trunk *httpTrunk) {
	t.Helper()
	t.Logf("conformance %s: %d/%d scenarios pass directly, %d/%d through mcptrunk (%s directly, %s through mcptrunk)",
		revision, passCount(direct.results), len(direct.results), passCount(through.results), len(through.results),
		direct.elapsed.Round(time.Millisecond), through.elapsed.Round(time.Millisecond))
	if passCount(direct.results) == 0 {
		t.Errorf("no scenario passed directly: the suite or the everything-server is broken\n%s", tail(direct.output.String(), 4000))
	}
	d := compareSuite(direct.results, through.results)
	if len(d.failedDirect) > 0 {
		t.Logf("failing directly too, not held against the trunk: %s", scenarioList(d.failedDirect))
		for _, name := range d.failedDirect {
			t.Logf("  %s directly: %s", name, direct.results[name])
		}
	}
	if len(d.gained) > 0 {
		t.Logf("failing directly but passing through mcptrunk: %s", scenarioList(d.gained))
	}
	for _, name := range d.warnedMore {
		t.Logf("%s: more warnings (SHOULDs not met) through mcptrunk than directly: %s", name, through.results[name])
	}
	known, problems := judgeGaps(d, direct.results, through.results, trunkGaps[revision])
	for _, k := range known {
		t.Logf("known gap: %s", k)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", revision, p)
	}
	if len(problems) > 0 {
		t.Logf("the suite through mcptrunk:\n%s", tail(through.output.String(), 6000))
		t.Logf("mcptrunk's log:\n%s", tail(trunk.stderr.String(), 8000))
	}
}

// trunkGap is a scenario known to pass directly and to fail through the
// trunk: the checks that fail there, and why.
type trunkGap struct {
	checks []string // the failed checks' ids, sorted
	why    string
}

// trunkGaps are the known gaps of each revision's run, each found by this
// test and explained. The test fails on any other regression, on a gap
// whose failed checks change, and on a gap that passes through the trunk
// now: fixing one means removing its entry.
var trunkGaps = map[string]map[string]trunkGap{}

// judgeGaps sets the regressions against the known gaps. known describes
// each gap seen as it is known; problems are the regressions that are no
// known gap or fail other checks than the known, and the gaps that pass
// through the trunk now or no longer run.
func judgeGaps(d suiteDiff, direct, through map[string]scenarioResult, gaps map[string]trunkGap) (known, problems []string) {
	for _, name := range d.regressed {
		r, ran := through[name]
		gap, isGap := gaps[name]
		switch {
		case !ran:
			problems = append(problems, fmt.Sprintf("scenario %s passes directly but has no result through mcptrunk", name))
		case !isGap:
			problems = append(problems, fmt.Sprintf("scenario %s passes directly but fails through mcptrunk: %s", name, r))
		case !slices.Equal(r.failedIDs, gap.checks):
			problems = append(problems, fmt.Sprintf("scenario %s, a known gap, fails other checks through mcptrunk than known (%s): %s",
				name, strings.Join(gap.checks, ", "), r))
		default:
			known = append(known, fmt.Sprintf("%s (%s): %s", name, strings.Join(gap.checks, ", "), gap.why))
		}
	}
	for _, name := range sortedKeys(gaps) {
		_, ranDirect := direct[name]
		r, ran := through[name]
		switch {
		case !ranDirect:
			problems = append(problems, fmt.Sprintf("known gap %s has no result directly: the suite no longer runs it, remove it from trunkGaps", name))
		case ran && r.ok():
			problems = append(problems, fmt.Sprintf("known gap %s passes through mcptrunk now: remove it from trunkGaps", name))
		}
	}
	return known, problems
}

// suiteDir makes the folder name under dir for one run's results.
func suiteDir(t testing.TB, dir, name string) string {
	path := filepath.Join(dir, name)
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Error(err)
	}
	return path
}

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

// A regression is known only as a gap with exactly its checks failing; a
// gap that passes through the trunk, or no longer runs, is reported.
func TestConformanceJudgeGaps(t *testing.T) {
	pass := scenarioResult{passed: 2}
	failing := func(ids ...string) scenarioResult { return scenarioResult{passed: 1, failed: len(ids), failedIDs: ids} }
	direct := map[string]scenarioResult{"known": pass, "changed": pass, "new": pass, "fixed": pass, "missing": pass, "both": failing("x")}
	through := map[string]scenarioResult{"known": failing("a", "b"), "changed": failing("a", "c"), "new": failing("z"), "fixed": pass, "both": failing("x")}
	gaps := map[string]trunkGap{
		"known":   {[]string{"a", "b"}, "why known"},
		"changed": {[]string{"a"}, "why changed"},
		"fixed":   {[]string{"a"}, "why fixed"},
		"both":    {[]string{"x"}, "fails directly too"},
		"gone":    {[]string{"a"}, "no longer run"},
	}
	known, problems := judgeGaps(compareSuite(direct, through), direct, through, gaps)
	if len(known) != 1 || !strings.HasPrefix(known[0], "known (a, b): why known") {
		t.Errorf("known = %q, want the one gap failing as known", known)
	}
	for _, want := range []string{
		"scenario changed, a known gap, fails other checks",
		"scenario missing passes directly but has no result through mcptrunk",
		"scenario new passes directly but fails through mcptrunk",
		"known gap fixed passes through mcptrunk now",
		"known gap gone has no result directly",
	} {
		if !slices.ContainsFunc(problems, func(p string) bool { return strings.HasPrefix(p, want) }) {
			t.Errorf("no problem %q in %q", want, problems)
		}
	}
	if len(problems) != 5 {
		t.Errorf("problems = %q, want 5", problems)
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
		`[{"id":"a","status":"SUCCESS"},{"id":"progress","status":"FAILURE","errorMessage":"no\nprogress"},{"id":"i","status":"INFO"},`+
			`{"id":"a2","status":"FAILURE","errorMessage":"x"},{"id":"progress","status":"FAILURE","errorMessage":"again"}]`)
	write("server-ping-2026-12-02T05-10-22-070Z", `[{"id":"ping","status":"SUCCESS"},{"id":"w","status":"WARNING","description":"slow"}]`)
	write("server-tasks-status-notifications-2026-12-02T05-10-23-001Z", `[]`)
	write("not-a-scenario", `[]`)
	got, err := readSuiteResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]scenarioResult{
		"tools-call-with-progress":   {passed: 1, failed: 3, failedIDs: []string{"a2", "progress"}, failures: []string{"progress: no progress", "a2: x", "progress: again"}},
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
