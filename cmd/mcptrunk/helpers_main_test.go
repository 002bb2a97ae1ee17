package main

// The end-to-end harness: TestMain builds mcptrunk and the example servers
// once, every test starts them as real processes, and after the run no
// process started by the tests may be left behind.
//
// Every long-lived process a test runs (the trunk over stdio or HTTP, an
// upstream run directly, HAProxy) starts through startProc
// (helpers_proc_test.go), which ends it, checks the trunk reported no race
// and that nothing it started is left. The tests play the host with two
// clients over it:
//   - rawConn, the raw-JSON host: line-based JSON-RPC that keeps every
//     message's bytes, so a result that went through the trunk can be
//     compared byte for byte with what the upstream sends directly, and
//     that takes results too large to decode cheaply (helpers_raw_test.go);
//     postMCP is its HTTP counterpart for serve --http (helpers_http_test.go);
//   - host, the official Go SDK (github.com/modelcontextprotocol/go-sdk),
//     an independent implementation, over stdio or HTTP, recording what it
//     receives (helpers_sdk_test.go, protocol_helpers_host_test.go).
//
// The other helpers_*_test.go files hold what every suite shares: finding
// the processes a test started (procs), configs, commands and their output
// (run), the npm reference servers (npm), JSON (json), waiting (wait) and
// small list helpers (lists).

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcptrunk/mcptrunk/internal/testkit"
)

// Set by TestMain.
var (
	moduleRoot string // the directory holding go.mod
	binDir     string // where the binaries were built; removed after the run
	trunkBin   string
	notesBin   string
	weatherBin string
	chaosBin   string
	npmModules string // testdata/npm/node_modules
	raceBuild  bool   // mcptrunk itself was built with -race
)

// runEnv is set in the test process (so every child inherits it) to mark
// the processes of this run: the leak check finds them by it, not by name,
// so another test run on the machine cannot make this one fail.
const runEnv = "MCPTRUNK_E2E_RUN"

// tagEnv marks the processes of one test (the trunk and its upstreams), so
// a test can check that everything it started is gone.
const tagEnv = "MCPTRUNK_E2E_TAG"

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	flag.Parse()
	widenParallel()
	root, err := testkit.ModuleRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	moduleRoot = root
	npmModules = testkit.NPMModules(root)

	dir, err := os.MkdirTemp("", "mcptrunk-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	binDir = dir
	if err := buildBinaries(dir); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	exe := ""
	if runtime.GOOS == "windows" {
		exe = ".exe"
	}
	trunkBin = filepath.Join(dir, "mcptrunk"+exe)
	notesBin = filepath.Join(dir, "mcptrunk-notes"+exe)
	weatherBin = filepath.Join(dir, "mcptrunk-weather"+exe)
	chaosBin = filepath.Join(dir, "mcptrunk-chaos"+exe)

	os.Setenv(runEnv, dir)
	// A test that runs the go command (TestVersionStamped) keeps the build
	// cache: in an empty one it would compile every package again.
	testkit.KeepGoCache()
	// Every trunk caches catalogs: never in the user's cache.
	os.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	if os.Getenv("GORACE") == "" {
		// A race-enabled binary sleeps a second before exiting by default,
		// which would blur the shutdown timings.
		os.Setenv("GORACE", "atexit_sleep_ms=50")
	}
	ignore := goleak.IgnoreCurrent()
	start := time.Now()
	code := m.Run()
	elapsed := time.Since(start)

	if leaked := waitForProcesses(func(p procInfo) bool {
		return strings.HasPrefix(p.exe, dir+string(filepath.Separator)) ||
			(p.env[runEnv] == dir && (strings.Contains(p.cmdline, "testdata/npm/node_modules") || p.env[tagEnv] != ""))
	}, 10*time.Second); len(leaked) > 0 {
		fmt.Fprintf(os.Stderr, "e2e: FAIL: %d processes started by the tests are still running:\n", len(leaked))
		for _, p := range leaked {
			fmt.Fprintf(os.Stderr, "  %s\n", p)
			// They carry this run's marker: ours to end.
			if proc, err := os.FindProcess(p.pid); err == nil {
				_ = proc.Kill()
			}
		}
		code = 1
	}
	if err := goleak.Find(ignore); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: FAIL: goroutines leaked by the tests: %v\n", err)
		code = 1
	}
	if os.Getenv("MCPTRUNK_E2E_TIMING") != "" || testing.Verbose() {
		fmt.Fprintf(os.Stderr, "e2e: tests ran in %s (after building)\n", elapsed.Round(time.Millisecond))
	}
	return code
}

// buildBinaries builds every command, go-sdk's everything-server and the
// probe and asker servers into dir; code mode's runner lands next to
// mcptrunk, where the trunk finds it. When the tests run with -race,
// mcptrunk is built with -race (and only so: a plain build of it as well
// would compile its dependencies a second time, without -race, which the
// test binaries never share), and every test that reads its stderr fails
// on a race report. The servers it runs, and the runner, are built
// without -race: they are the fixtures, not what is tested.
func buildBinaries(dir string) error {
	start := time.Now()
	build := func(args ...string) error { return testkit.GoBuild(moduleRoot, args...) }
	// go-sdk's everything-server and the probe and asker servers, which tests run,
	// are built here beside the commands rather than by the first test
	// that asks: a build inside a test's deadline failed it on a loaded
	// machine.
	conformance := make(chan error, 1)
	go func() {
		_, err := testkit.ConformanceServer(dir)
		if err == nil {
			_, err = buildProbe()
		}
		if err == nil {
			_, err = buildAsker()
		}
		conformance <- err
	}()
	// The commands the tests run, named rather than ./cmd/... so that a
	// command being written elsewhere in cmd/ cannot break this suite.
	// The trunk's build runs beside the servers' (a link is mostly one
	// core's work).
	servers := []string{"./cmd/mcptrunk-code", "./cmd/mcptrunk-notes", "./cmd/mcptrunk-weather", "./cmd/mcptrunk-chaos"}
	trunk := make(chan error, 1)
	go func() {
		args := []string{"-o", dir + string(filepath.Separator), "./cmd/mcptrunk"}
		if raceEnabled {
			args = append([]string{"-race"}, args...)
		}
		trunk <- build(args...)
	}()
	errs := []error{build(append([]string{"-o", dir + string(filepath.Separator)}, servers...)...), <-trunk, <-conformance}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	raceBuild = raceEnabled
	if testing.Verbose() {
		fmt.Fprintf(os.Stderr, "e2e: built the binaries in %s (race: %v)\n", time.Since(start).Round(time.Millisecond), raceBuild)
	}
	for _, name := range []string{"mcptrunk", "mcptrunk-code", "mcptrunk-notes", "mcptrunk-weather", "mcptrunk-chaos"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("go build did not produce %s: %w", name, err)
		}
	}
	return nil
}
