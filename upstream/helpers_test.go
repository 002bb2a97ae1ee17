package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/testkit"
	"go.uber.org/goleak"
)

// subprocWait bounds every wait, so a bug shows up as a failure rather than
// a hung test binary.
const subprocWait = 10 * time.Second

// slack is how late something that should happen "at once" may be before a
// test fails: generous, as the race detector and other packages' tests
// running alongside can slow everything down tenfold.
const slack = 5 * time.Second

var tagCounter atomic.Int64

// harness is one test's servers: a directory for their files, a tag that
// marks their processes, a log, and a recorder of the Fleet's events. Tests
// that use it do not run in parallel: the leak check is per test.
type harness struct {
	t   *testing.T
	dir string
	tag string
	log *testkit.Buffer
	rec *eventRecorder
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{
		t:   t,
		dir: t.TempDir(),
		tag: fmt.Sprintf("%d-%d", os.Getpid(), tagCounter.Add(1)),
		log: &testkit.Buffer{},
		rec: newEventRecorder(),
	}
	// Only goroutines this test starts count: other tests of the package
	// (and their stragglers) are not this test's business.
	ignore := goleak.IgnoreCurrent()
	// Registered first, so it runs last: after every Host is closed.
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("host log:\n%s", h.log.String())
		}
		h.checkNoProcesses("at the end of the test")
		goleak.VerifyNone(t, ignore)
	})
	return h
}

// checkNoProcesses fails the test if any process it started still runs.
func (h *harness) checkNoProcesses(when string) {
	h.t.Helper()
	var left []int
	deadline := time.Now().Add(slack) // a SIGKILLed grandchild takes a moment to die
	for {
		if left = tagged(h.tag); len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, pid := range left {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		h.t.Errorf("%s: process %d is still running: %q", when, pid, cmdline)
		_ = killPid(pid)
	}
}

// host returns a Fleet with the harness's logger and events, closed when the
// test ends. opts may set anything else.
func (h *harness) host(opts *Options) *Fleet {
	h.t.Helper()
	if opts == nil {
		opts = &Options{}
	}
	opts.Logger = slog.New(slog.NewTextHandler(h.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if opts.Events.Changed == nil && opts.Events.Notification == nil && opts.Events.Request == nil {
		opts.Events = h.rec.events(nil)
	}
	if opts.Version == "" {
		opts.Version = "9.9.9-test"
	}
	if opts.CacheDir == "" {
		opts.CacheDir = h.cacheDir()
	}
	host := NewFleet(opts)
	h.rec.setHost(host)
	h.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), subprocWait)
		defer cancel()
		_ = host.Close(ctx)
	})
	return host
}

// cacheDir is the catalog cache of the test's Hosts.
func (h *harness) cacheDir() string { return filepath.Join(h.dir, "cache") }

// spec is a server running the test binary in mode, with timeouts generous
// enough never to fire by accident. env adds variables (key, value, ...).
func (h *harness) spec(name, mode string, env ...string) config.Spec {
	e := map[string]string{
		envMode: mode,
		envDir:  h.dir,
		envName: name,
		envTag:  h.tag,
		// A binary built with -race sleeps a second on exit by default,
		// which would make every server look like it ignores stdin EOF.
		"GORACE": strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0"),
	}
	for i := 0; i+1 < len(env); i += 2 {
		e[env[i]] = env[i+1]
	}
	return config.Spec{
		Name:    name,
		Type:    config.TransportStdio,
		Command: os.Args[0],
		Env:     e,
		// The test server (testserver_test.go) speaks 2025-11-25 only and
		// the tests check its exact wire: pinned, so no server/discover
		// probe comes first. Auto mode has tests of its own
		// (stateless_test.go).
		ProtocolVersion: "2025-11-25",
		Timeouts: config.Timeouts{
			Connect: config.Duration(subprocWait),
			List:    config.Duration(subprocWait),
			Call:    config.Duration(subprocWait),
		},
	}
}

// pid waits for the server (or its grandchild, kind "grandchild") to have
// written its PID.
func (h *harness) pid(name, kind string) int {
	h.t.Helper()
	var pid int
	pollUntil(h.t, "the pid file of "+name+"."+kind, func() bool {
		b, err := os.ReadFile(filepath.Join(h.dir, name+"."+kind))
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(string(b))
		return err == nil
	})
	return pid
}

// pidWritten is the pid in name's pid file of kind if the server wrote
// one, without waiting for it.
func (h *harness) pidWritten(name, kind string) (int, bool) {
	b, err := os.ReadFile(filepath.Join(h.dir, name+"."+kind))
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(string(b))
	return pid, err == nil
}

// withGrace sets one of the grace variables for a test. Call it before
// newHarness, so it is restored after the test's servers are closed. Tests
// here do not run in parallel and leave no transport behind, so nothing
// else reads the variable meanwhile.
func withGrace(t *testing.T, v *time.Duration, d time.Duration) {
	t.Helper()
	old := *v
	*v = d
	t.Cleanup(func() { *v = old })
}

// release lets a server held with envHoldB answer.
func (h *harness) release(name string) {
	h.t.Helper()
	if err := os.WriteFile(filepath.Join(h.dir, name+".release"), nil, 0o644); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) fileExists(name string) bool {
	_, err := os.Stat(filepath.Join(h.dir, name))
	return err == nil
}

// received returns every message the server has received so far, in order.
func (h *harness) received(name string) []wireMessage {
	h.t.Helper()
	b, err := os.ReadFile(filepath.Join(h.dir, name+".log"))
	if err != nil {
		return nil
	}
	var out []wireMessage
	for line := range bytes.Lines(b) {
		if !bytes.HasSuffix(line, []byte("\n")) {
			break // still being written
		}
		var m wireMessage
		if err := json.Unmarshal(line, &m); err != nil {
			h.t.Fatalf("server %s logged a line that is not JSON: %q", name, line)
		}
		out = append(out, m)
	}
	return out
}

// methods returns the methods of what the server received.
func (h *harness) methods(name string) []string {
	var out []string
	for _, m := range h.received(name) {
		if m.Method != "" {
			out = append(out, m.Method)
		}
	}
	return out
}

// sharedLog returns the lines every server of the test appended.
func (h *harness) sharedLog() []string {
	b, _ := os.ReadFile(filepath.Join(h.dir, "shared.log"))
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// eventRecorder keeps what a Fleet's events reported.
type eventRecorder struct {
	mu      sync.Mutex
	host    *Fleet
	changes map[string][]changeEvent
	notes   []noteEvent
	reqs    []requestEvent
}

type changeEvent struct {
	state   State
	err     error
	catalog Catalog
}

type noteEvent struct {
	server, method string
	params         json.RawMessage
}

type requestEvent struct {
	server, method string
	params         json.RawMessage
	cancelled      bool // its ctx ended while the handler waited
}

func newEventRecorder() *eventRecorder { return &eventRecorder{changes: map[string][]changeEvent{}} }

func (r *eventRecorder) setHost(h *Fleet) {
	r.mu.Lock()
	r.host = h
	r.mu.Unlock()
}

// events returns Events that record everything. answer, when set, answers
// the server's requests after they are recorded.
func (r *eventRecorder) events(answer func(ctx context.Context, req requestEvent) (json.RawMessage, error)) Events {
	return Events{
		Changed: func(server string) {
			r.mu.Lock()
			host := r.host
			r.mu.Unlock()
			ch := changeEvent{state: "removed"}
			if c, ok := host.Client(server); ok {
				ch.state, ch.err = c.State()
				ch.catalog = c.Catalog()
			}
			r.mu.Lock()
			r.changes[server] = append(r.changes[server], ch)
			r.mu.Unlock()
		},
		Notification: func(server, method string, params json.RawMessage) {
			r.mu.Lock()
			r.notes = append(r.notes, noteEvent{server, method, slices.Clone(params)})
			r.mu.Unlock()
		},
		Request: func(ctx context.Context, server, method string, params json.RawMessage) (json.RawMessage, error) {
			req := requestEvent{server: server, method: method, params: slices.Clone(params)}
			r.mu.Lock()
			r.reqs = append(r.reqs, req)
			i := len(r.reqs) - 1
			r.mu.Unlock()
			if answer == nil {
				return json.RawMessage(`{}`), nil
			}
			res, err := answer(ctx, req)
			if ctx.Err() != nil {
				r.mu.Lock()
				r.reqs[i].cancelled = true
				r.mu.Unlock()
			}
			return res, err
		},
	}
}

func (r *eventRecorder) changesOf(server string) []changeEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.changes[server])
}

func (r *eventRecorder) notifications() []noteEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.notes)
}

func (r *eventRecorder) requests() []requestEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.reqs)
}

// pollUntil polls cond until it holds, failing the test after subprocWait.
func pollUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	pollUntilWithin(t, subprocWait, what, cond)
}

func pollUntilWithin(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", limit, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func awaitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(subprocWait):
		t.Fatalf("timed out after %v waiting for %s", subprocWait, what)
	}
}

func chanClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func ctxFor(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), subprocWait)
	t.Cleanup(cancel)
	return ctx
}

// needProcfs skips a test that has to look at processes where it cannot.
func needProcfs(t *testing.T) {
	t.Helper()
	if !procfs {
		t.Skipf("needs /proc to check processes; %s has none", runtime.GOOS)
	}
}

// awaitGone waits for a process to be gone.
func awaitGone(t *testing.T, pid int, what string) {
	t.Helper()
	if !procfs {
		return
	}
	deadline := time.Now().Add(slack)
	for alive(pid) {
		if time.Now().After(deadline) {
			_ = killPid(pid)
			t.Fatalf("%s (pid %d) is still running", what, pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func killPid(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

// items builds the Items a list of pages should become: every item with a
// key, in order, with its bytes as sent.
func catalogItems(s surface, pages [][]string) []Item {
	var out []Item
	for _, page := range pages {
		for _, raw := range page {
			key, err := itemKey(s, json.RawMessage(raw))
			if err != nil {
				continue
			}
			out = append(out, Item{Key: key, Raw: json.RawMessage(raw)})
		}
	}
	return out
}

// diffItems reports, as a string, how got differs from want ("" if not): keys,
// order and raw bytes must all match.
func diffItems(got, want []Item) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d items %v, want %d %v", len(got), itemKeys(got), len(want), itemKeys(want))
	}
	for i := range got {
		if got[i].Key != want[i].Key {
			return fmt.Sprintf("item %d is %q, want %q (all: %v)", i, got[i].Key, want[i].Key, itemKeys(got))
		}
		if !bytes.Equal(got[i].Raw, want[i].Raw) {
			return fmt.Sprintf("item %q is\n\t%s\nwant exactly\n\t%s", got[i].Key, got[i].Raw, want[i].Raw)
		}
	}
	return ""
}

func itemKeys(its []Item) []string {
	out := make([]string, len(its))
	for i, it := range its {
		out[i] = it.Key
	}
	return out
}

// normalCatalog is what a normal server offers.
func normalCatalog() Catalog {
	return Catalog{
		Tools:     catalogItems(surfaceTools, testToolPages),
		Prompts:   catalogItems(surfacePrompts, testPromptPages),
		Resources: catalogItems(surfaceResources, testResourcePages),
		Templates: catalogItems(surfaceTemplates, testTemplatePages),
	}
}

// checkCatalog fails the test where got is not want, list by list.
func checkCatalog(t *testing.T, server string, got, want Catalog) {
	t.Helper()
	for s := range surfaceCount {
		if d := diffItems(*got.list(s), *want.list(s)); d != "" {
			t.Errorf("server %s, %s: %s", server, s, d)
		}
	}
}
