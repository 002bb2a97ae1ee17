package main

// The conformance suite's scenarios of the tasks extension
// (io.modelcontextprotocol/tasks, SEP-2663), which the 2026-07-28
// requirement set runs unscored and go-sdk's everything-server has no
// fixtures for, run against internal/testkit/taskserver: directly, and
// through `mcptrunk serve --http` with that server as a 2026-07-28 upstream
// exported under its own names. Every scenario passes directly, and every
// one that does must pass through the trunk.

import (
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/testkit/taskserver"
)

// suiteTasksRevision is the requirement set whose tasks scenarios run.
const suiteTasksRevision = "2026-07-28"

func TestConformanceTasks(t *testing.T) {
	t.Parallel()
	node, cli := suiteNode(t), npmConformanceCLI(t)
	scenarios := tasksScenarios(t)

	tasksURL := taskserver.Start(t)
	up := pinStateless(server{"type": "http", "url": tasksURL, "namespace": false, "timeouts": slowTimeouts})
	cfg := writeConfig(t, map[string]server{"tasks": up}, nil)
	ctx := testCtx(t, 5*time.Minute)
	trunk := startHTTPTrunk(t, ctx, cfg)

	// One CLI run per scenario: they are extension scenarios, outside the
	// revision's timeline, which --force runs at it.
	var runs [][]string
	for _, name := range scenarios {
		runs = append(runs, []string{"--scenario", name, "--spec-version", suiteTasksRevision, "--force"})
	}
	var direct, through suiteRun
	var directErr, throughErr error
	dir := t.TempDir()
	var wg sync.WaitGroup
	wg.Go(func() {
		direct, directErr = runSuiteArgs(ctx, node, cli, tasksURL, suiteDir(t, dir, "direct"), runs...)
	})
	wg.Go(func() {
		through, throughErr = runSuiteArgs(ctx, node, cli, trunk.url, suiteDir(t, dir, "trunk"), runs...)
	})
	wg.Wait()
	if directErr != nil {
		t.Fatalf("directly: %v", directErr)
	}
	if throughErr != nil {
		t.Fatalf("through mcptrunk: %v", throughErr)
	}
	for _, name := range scenarios {
		if r, ran := direct.results[name]; !ran || !r.ok() {
			t.Errorf("%s fails against the tasks server directly (ran: %t): %s", name, ran, r)
		}
	}
	if len(direct.results) != len(scenarios) {
		t.Errorf("%d results directly for the %d scenarios %s", len(direct.results), len(scenarios), scenarioList(scenarios))
	}
	reportSuite(t, "tasks at "+suiteTasksRevision, direct, through, trunk)
}

// tasksScenarioRE is a tasks scenario's line in a requirement set.
var tasksScenarioRE = regexp.MustCompile(`(?m)^\s*-\s*scenario:\s*(tasks-[a-z0-9-]+)\s*$`)

// tasksScenarios are the tasks scenarios the suite's 2026-07-28
// requirement set lists, read from it so that a new one runs here too.
func tasksScenarios(t testing.TB) []string {
	t.Helper()
	path := filepath.Join(npmModules, conformancePkg, "requirements", suiteTasksRevision+".yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the suite's requirement set: %v", err)
	}
	var names []string
	for _, m := range tasksScenarioRE.FindAllStringSubmatch(string(data), -1) {
		names = append(names, m[1])
	}
	if len(names) == 0 {
		t.Fatalf("%s lists no tasks scenario", path)
	}
	return names
}
