package child_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcptrunk/mcptrunk/internal/testkit"
	"github.com/mcptrunk/mcptrunk/proxy/codemode/child"
)

// runnerPath is the runner built for this test binary's run.
var runnerPath string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcptrunk-code-test-")
	if err != nil {
		panic(err)
	}
	code := func() int {
		defer os.RemoveAll(dir)
		root, err := testkit.ModuleRoot()
		if err == nil {
			runnerPath = filepath.Join(dir, child.RunnerName)
			err = testkit.GoBuild(root, "-o", runnerPath, "./cmd/mcptrunk-code")
		}
		if err != nil {
			os.Stderr.WriteString("building the runner: " + err.Error() + "\n")
			return 1
		}
		return m.Run()
	}()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			os.Stderr.WriteString("goroutines leaked: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}

var budgets = child.Budgets{WallTime: 20 * time.Second, MaxCalls: 10, MaxInFlight: 4, MaxResultBytes: 1 << 10, MaxLogBytes: 1 << 10, MaxMemoryBytes: 64 << 20}

func echo(_ context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	if name == "mcp__t__refused" {
		return nil, errors.New("tool mcp__t__refused is not allowed")
	}
	return json.RawMessage(`{"structuredContent":` + string(args) + `}`), nil
}

// children lists the processes this test process started that still run
// (Linux: /proc/self/task/*/children).
func children(t *testing.T) []string {
	t.Helper()
	if runtime.GOOS != "linux" {
		return nil
	}
	tasks, err := filepath.Glob("/proc/self/task/*/children")
	if err != nil {
		t.Fatal(err)
	}
	var pids []string
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // the thread ended
		}
		pids = append(pids, strings.Fields(string(b))...)
	}
	return pids
}

// A program in a runner process calls back to the trunk's call
// function, sees a refusal's message, and its result, logs and calls
// come back; the process has ended when the run returns.
func TestRunProcessRunsAndCallsBack(t *testing.T) {
	res, err := child.RunProcess(t.Context(), runnerPath, `
		const r = await call("mcp__t__x", {a: 1});
		let refused = "";
		try { await tools.t.refused({}); } catch (e) { refused = e.message; }
		console.log("done");
		return {a: r.structuredContent.a, refused};`,
		child.Options{Call: echo, Budgets: budgets, Tools: map[string]map[string]string{"t": {"refused": "mcp__t__refused"}}})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Value) != `{"a":1,"refused":"tool mcp__t__refused is not allowed"}` || res.Calls != 2 || len(res.Logs) != 1 || res.Logs[0] != "done" {
		t.Errorf("run: %+v (%s)", res, res.Value)
	}
	if pids := children(t); len(pids) > 0 {
		t.Errorf("runner processes still running after the run: %v", pids)
	}
}

// A program that allocates past the memory budget ends with the budget's
// error, and the next run works.
func TestRunProcessMemoryBudget(t *testing.T) {
	for _, hog := range []string{
		`return "x".repeat(1e9).length;`, // at once
		`const a = []; for (;;) a.push("y".repeat(1 << 20) + a.length); return a.length;`, // little by little
	} {
		_, err := child.RunProcess(t.Context(), runnerPath, hog, child.Options{Call: echo, Budgets: budgets})
		if be, ok := errors.AsType[*child.BudgetError](err); !ok || be.Budget != "maxMemoryBytes" || be.Limit != "67108864" {
			t.Errorf("%s: want the budget maxMemoryBytes (67108864), got %v", hog, err)
		}
		res, err := child.RunProcess(t.Context(), runnerPath, `return 6 * 7;`, child.Options{Call: echo, Budgets: budgets})
		if err != nil || string(res.Value) != "42" {
			t.Errorf("the run after a memory hog: %s, %v", res.Value, err)
		}
	}
	if pids := children(t); len(pids) > 0 {
		t.Errorf("runner processes still running after the runs: %v", pids)
	}
}

// Cancelling the run ends the runner process and the call it was making.
func TestRunProcessCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	called := make(chan struct{})
	ended := make(chan error, 1)
	block := func(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, error) {
		close(called)
		<-ctx.Done()
		ended <- ctx.Err()
		return nil, ctx.Err()
	}
	go func() { <-called; cancel() }()
	_, err := child.RunProcess(ctx, runnerPath, `await call("mcp__t__slow", {}); return 1;`, child.Options{Call: block, Budgets: budgets})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled run: want context.Canceled, got %v", err)
	}
	if err := <-ended; !errors.Is(err, context.Canceled) {
		t.Errorf("the call in flight: want it cancelled, got %v", err)
	}
	if pids := children(t); len(pids) > 0 {
		t.Errorf("runner processes still running after the run: %v", pids)
	}
}

// A runner that is not there is named, with how to install it.
func TestRunProcessMissingRunner(t *testing.T) {
	_, err := child.RunProcess(t.Context(), filepath.Join(t.TempDir(), child.RunnerName), `return 1;`, child.Options{Call: echo, Budgets: budgets})
	if err == nil || !strings.Contains(err.Error(), child.RunnerName) {
		t.Errorf("want an error naming %s, got %v", child.RunnerName, err)
	}
}

// Find looks next to the executable (here the test binary, which has no
// runner beside it), then on PATH; missing, it names the runner and how
// to install it.
func TestFind(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if p, err := child.Find(); err == nil || !strings.Contains(err.Error(), child.RunnerName) || !strings.Contains(err.Error(), "go install github.com/mcptrunk/mcptrunk/cmd/mcptrunk-code@latest") {
		t.Errorf("no runner anywhere: %q, %v; want an error naming it and how to install it", p, err)
	}
	t.Setenv("PATH", filepath.Dir(runnerPath))
	if p, err := child.Find(); err != nil || p != runnerPath {
		t.Errorf("the runner on PATH: %q, %v; want %s", p, err, runnerPath)
	}
}

// BenchmarkRunProcess is a run's cost in a runner process: the process
// started, the program run, its calls answered by the trunk's side (at
// once), the process ended. BenchmarkRun in proxy/codemode is the
// engine's part of it.
func BenchmarkRunProcess(b *testing.B) {
	for _, bc := range []struct{ name, code string }{
		{"empty", `return 1;`},
		{"one call", `return (await call("mcp__t__x", {a: 1})).structuredContent;`},
		{"ten calls at once", `return (await Promise.all(Array.from({length: 10}, (_, i) => call("mcp__t__x", {i})))).length;`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := child.RunProcess(context.Background(), runnerPath, bc.code, child.Options{Call: echo, Budgets: budgets}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A runner that ends without answering, not for its memory, ends the run
// with an error saying how, with the first line it wrote.
func TestRunProcessRunnerCrashed(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the crashing runner is a shell script")
	}
	crash := filepath.Join(t.TempDir(), child.RunnerName)
	if err := os.WriteFile(crash, []byte("#!/bin/sh\necho 'panic: the runner broke' >&2\necho 'goroutine 1 [running]:' >&2\nexit 2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := child.RunProcess(t.Context(), crash, `return 1;`, child.Options{Call: echo, Budgets: budgets})
	if _, ok := errors.AsType[*child.BudgetError](err); ok || err == nil ||
		!strings.HasPrefix(err.Error(), "code mode's runner ended (exit status 2") || !strings.HasSuffix(err.Error(), "): panic: the runner broke") {
		t.Errorf("a runner that crashed: %v", err)
	}
}

// The trunk links no JavaScript engine: that is the runner's alone.
func TestTrunkLinksNoEngine(t *testing.T) {
	root, err := testkit.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-deps", "./cmd/mcptrunk", "./proxy/codemode/child")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.Contains(pkg, "/goja") || strings.HasSuffix(pkg, "/proxy/codemode") {
			t.Errorf("mcptrunk links %s: code mode's engine belongs in mcptrunk-code", pkg)
		}
	}
}
