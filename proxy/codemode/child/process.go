package child

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// RunnerName is the runner's executable, which Find looks for.
const RunnerName = "mcptrunk-code"

// InstallHint says how to install the runner, for errors that it is missing.
const InstallHint = "go install github.com/mcptrunk/mcptrunk/cmd/mcptrunk-code@latest, or put the mcptrunk-code of the release archive next to mcptrunk"

// DefaultMaxMemoryBytes is the runner's memory budget when none is set.
const DefaultMaxMemoryBytes = 256 << 20

// Find returns the runner's path: next to the running executable first,
// so that a trunk runs the runner it was installed with, then on PATH.
// The error names the runner and how to install it.
func Find() (string, error) {
	name := RunnerName
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("code mode's runner %s is neither next to the mcptrunk executable nor on PATH (install it: %s)", RunnerName, InstallHint)
}

// grace is how long past its wall time a runner may take to answer
// before the trunk ends it: the runner interrupts the program at its
// wall time itself, so only a runner that cannot (a collector thrashing
// at the memory bound) is ended.
const grace = 5 * time.Second

// Run runs code in a new runner process found by Find, which ends with
// the run: o.Budgets.MaxMemoryBytes bounds its memory (0:
// DefaultMaxMemoryBytes). When ctx ends the process is ended, and with it
// the run and the calls it made. A runner that ran out of memory ends the
// run with a *BudgetError naming maxMemoryBytes.
func Run(ctx context.Context, code string, o Options) (Result, error) {
	path, err := Find()
	if err != nil {
		return Result{}, err
	}
	return RunProcess(ctx, path, code, o)
}

// RunProcess is Run with the runner at path.
func RunProcess(ctx context.Context, path, code string, o Options) (Result, error) {
	if o.Budgets.MaxMemoryBytes <= 0 {
		o.Budgets.MaxMemoryBytes = DefaultMaxMemoryBytes
	}
	cmd := exec.Command(path, "-max-memory", strconv.FormatInt(o.Budgets.MaxMemoryBytes, 10))
	cmd.Env = []string{} // the program reaches nothing of the process; the runner needs none of the trunk's settings
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return Result{}, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return Result{}, err
	}
	stderr := &head{max: 4 << 10}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		return Result{}, fmt.Errorf("starting code mode's runner %s: %w", path, err)
	}
	// The runner ends the program at its wall time; past it and the
	// grace, or when ctx ends, the process is ended.
	runCtx, cancel := context.WithTimeoutCause(ctx, o.Budgets.WallTime+grace, &BudgetError{Budget: "wallTime", Limit: o.Budgets.WallTime.String()})
	defer cancel()
	stop := context.AfterFunc(runCtx, func() { _ = cmd.Process.Kill() })
	res, err := RunOver(runCtx, stdout, stdin, code, o)
	stop()
	waitErr := cmd.Wait()
	if err == nil {
		return res, nil
	}
	if _, ok := errors.AsType[*BudgetError](err); ok || runCtx.Err() != nil {
		if runCtx.Err() != nil {
			err = context.Cause(runCtx)
		}
		return res, err
	}
	if waitErr != nil { // the runner ended without an answer
		out, peak := stderr.String(), peakMemory(cmd.ProcessState)
		if outOfMemory(out) {
			return res, &BudgetError{Budget: "maxMemoryBytes", Limit: strconv.FormatInt(o.Budgets.MaxMemoryBytes, 10)}
		}
		how := waitErr.Error()
		if peak > 0 {
			how += fmt.Sprintf(", at most %d MiB in use", peak>>20)
		}
		if line := firstLine(out); line != "" {
			how += "): " + line
		} else {
			how += ")"
		}
		return res, errors.New("code mode's runner ended (" + how)
	}
	return res, err
}

// outOfMemory tells whether a runner's last words are the Go runtime's
// when it could not get memory under the process's limit: a fatal error
// ("out of memory", "cannot allocate memory"), or a fault of the runtime
// itself (its collector faults when an allocation of its own fails). A
// panic of the runner's own code begins "panic:" instead.
func outOfMemory(stderr string) bool {
	first := firstLine(stderr)
	for _, s := range []string{"fatal error:", "runtime: out of memory", "SIGSEGV:", "SIGBUS:", "unexpected fault address"} {
		if strings.HasPrefix(first, s) {
			return true
		}
	}
	return false
}

// firstLine is the first line of s that is not blank, clipped.
func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	l = strings.TrimSpace(l)
	if len(l) > 200 {
		l = l[:200] + "…"
	}
	return l
}

// head keeps the first max bytes written to it: a runner's stderr, whose
// first lines say why it ended.
type head struct {
	mu  sync.Mutex
	max int
	b   bytes.Buffer
}

func (t *head) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if room := t.max - t.b.Len(); room > 0 {
		t.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (t *head) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.b.String()
}
