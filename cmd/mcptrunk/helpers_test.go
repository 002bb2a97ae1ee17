package main

// The end-to-end harness: TestMain builds mcptrunk and the example servers
// once, every test starts them as real processes, and after the run no
// process started by the tests may be left behind.
//
// Two clients talk to those processes:
//   - the official Go SDK (github.com/modelcontextprotocol/go-sdk), an
//     independent implementation that plays the host;
//   - rawConn, a few dozen lines of line-based JSON-RPC that keep every
//     message's bytes, so a result that went through the trunk can be
//     compared byte for byte with what the upstream sends directly.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
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
	root, err := findModuleRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	moduleRoot = root
	npmModules = filepath.Join(root, "testdata", "npm", "node_modules")

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

// findModuleRoot asks the go command for go.mod, falling back to ../..
// (this package is cmd/mcptrunk).
func findModuleRoot() (string, error) {
	if out, err := exec.Command("go", "env", "GOMOD").Output(); err == nil {
		if gomod := strings.TrimSpace(string(out)); gomod != "" && gomod != os.DevNull {
			return filepath.Dir(gomod), nil
		}
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		return "", fmt.Errorf("cannot find the module root: %w", err)
	}
	return root, nil
}

// buildBinaries builds every command into dir. When the tests run with
// -race, mcptrunk is rebuilt with -race too, and every test that reads its
// stderr fails on a race report.
func buildBinaries(dir string) error {
	start := time.Now()
	build := func(args ...string) error {
		cmd := exec.Command("go", append([]string{"build"}, args...)...)
		cmd.Dir = moduleRoot
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go build %s: %v\n%s", strings.Join(args, " "), err, out.String())
		}
		return nil
	}
	// The commands the tests run, named rather than ./cmd/... so that a
	// command being written elsewhere in cmd/ cannot break this suite.
	if err := build("-o", dir+string(filepath.Separator), "./cmd/mcptrunk", "./cmd/mcptrunk-notes", "./cmd/mcptrunk-weather", "./cmd/mcptrunk-chaos"); err != nil {
		return err
	}
	if raceEnabled {
		if err := build("-race", "-o", filepath.Join(dir, "mcptrunk"), "./cmd/mcptrunk"); err != nil {
			return err
		}
		raceBuild = true
	}
	if testing.Verbose() {
		fmt.Fprintf(os.Stderr, "e2e: built the binaries in %s (race: %v)\n", time.Since(start).Round(time.Millisecond), raceBuild)
	}
	for _, name := range []string{"mcptrunk", "mcptrunk-notes", "mcptrunk-weather", "mcptrunk-chaos"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("go build did not produce %s: %w", name, err)
		}
	}
	return nil
}

// ---- processes ----

// procInfo is one running process as /proc shows it.
type procInfo struct {
	pid     int
	state   string
	exe     string
	cmdline string
	env     map[string]string
}

func (p procInfo) String() string {
	return fmt.Sprintf("pid %d (%s) exe=%s cmdline=%q", p.pid, p.state, p.exe, p.cmdline)
}

// processes lists the live processes (zombies excluded) that match, apart
// from the test process itself. Outside Linux it returns nothing.
func processes(match func(procInfo) bool) []procInfo {
	if runtime.GOOS != "linux" {
		return nil
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var out []procInfo
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		dir := filepath.Join("/proc", e.Name())
		stat, err := os.ReadFile(filepath.Join(dir, "stat"))
		if err != nil {
			continue // gone already
		}
		p := procInfo{pid: pid, env: map[string]string{}}
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
			p.state = string(stat[i+2 : i+3])
		}
		if p.state == "Z" || p.state == "X" {
			continue
		}
		p.exe, _ = os.Readlink(filepath.Join(dir, "exe"))
		p.exe = strings.TrimSuffix(p.exe, " (deleted)")
		if cmdline, err := os.ReadFile(filepath.Join(dir, "cmdline")); err == nil {
			p.cmdline = strings.TrimSpace(strings.ReplaceAll(string(cmdline), "\x00", " "))
		}
		if environ, err := os.ReadFile(filepath.Join(dir, "environ")); err == nil {
			for _, kv := range strings.Split(string(environ), "\x00") {
				if k, v, ok := strings.Cut(kv, "="); ok && (k == runEnv || k == tagEnv) {
					p.env[k] = v
				}
			}
		}
		if match(p) {
			out = append(out, p)
		}
	}
	return out
}

// needProc skips a test that must see processes: only Linux has /proc.
func needProc(t testing.TB) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("this test inspects processes through /proc, which only Linux has")
	}
}

// waitForProcesses waits up to timeout for every matching process to be
// gone and returns those still there.
func waitForProcesses(match func(procInfo) bool, timeout time.Duration) []procInfo {
	deadline := time.Now().Add(timeout)
	for {
		left := processes(match)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// tagged matches the processes of one test.
func tagged(tag string) func(procInfo) bool {
	return func(p procInfo) bool { return p.env[tagEnv] == tag }
}

var tagSeq atomic.Int64

// newTag returns a tag unique in this run for one test's processes.
func newTag(t testing.TB) string {
	return fmt.Sprintf("%s#%d", strings.ReplaceAll(t.Name(), "/", "."), tagSeq.Add(1))
}

// assertNoProcesses fails t if any process carrying tag is still running
// after grace.
func assertNoProcesses(t testing.TB, tag string, grace time.Duration) {
	t.Helper()
	if left := waitForProcesses(tagged(tag), grace); len(left) > 0 {
		for _, p := range left {
			t.Errorf("process left running: %s", p)
		}
	}
}

// ---- configs ----

// server is one entry of mcpServers.
type server map[string]any

func notesServer(args ...string) server {
	return server{"command": notesBin, "args": append([]string{}, args...)}
}

func weatherServer(args ...string) server {
	return server{"command": weatherBin, "args": append([]string{}, args...)}
}

func chaosServer(args ...string) server {
	return server{"command": chaosBin, "args": append([]string{}, args...)}
}

// writeConfig writes a config with the given servers (and optional trunk
// section) into a fresh temporary directory and returns its path.
func writeConfig(t testing.TB, servers map[string]server, trunk map[string]any) string {
	t.Helper()
	cfg := map[string]any{"mcpServers": servers}
	if trunk != nil {
		cfg["trunk"] = trunk
	}
	data, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "mcptrunk.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// ---- output capture ----

// syncBuffer collects a process's output for one writer and concurrent
// readers. It keeps the first maxKept bytes and counts the rest (a server
// flooding stderr through mcptrunk's log must not exhaust the test's
// memory), but notices a race report anywhere.
type syncBuffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	total int64
	raced bool
	carry []byte // the end of the previous write, for a marker split across writes
}

const maxKept = 8 << 20

const raceMarker = "WARNING: DATA RACE"

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.total += int64(len(p))
	if !b.raced {
		b.raced = bytes.Contains(append(b.carry, p...), []byte(raceMarker))
		n := min(len(p), len(raceMarker))
		b.carry = append(b.carry[:0], p[len(p)-n:]...)
	}
	if room := maxKept - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// String returns what was kept.
func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.total > int64(b.buf.Len()) {
		return b.buf.String() + fmt.Sprintf("\n[... %d more bytes not kept]\n", b.total-int64(b.buf.Len()))
	}
	return b.buf.String()
}

// Len is how many bytes were written.
func (b *syncBuffer) Len() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.total
}

func (b *syncBuffer) sawRace() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.raced
}

// checkNoRace fails t when a race-enabled mcptrunk reported a data race.
func checkNoRace(t testing.TB, stderr *syncBuffer) {
	t.Helper()
	if stderr.sawRace() {
		t.Errorf("mcptrunk reported a data race:\n%s", stderr.String())
	}
}

// ---- commands ----

// trunkCmd returns the command that runs mcptrunk with args, its
// processes (and every upstream's) marked with tag.
func trunkCmd(tag string, args ...string) *exec.Cmd {
	cmd := exec.Command(trunkBin, args...)
	cmd.Env = append(os.Environ(), tagEnv+"="+tag)
	return cmd
}

// runCLI runs an mcptrunk subcommand to completion and returns its stdout,
// stderr and exit status.
func runCLI(t testing.TB, timeout time.Duration, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	tag := newTag(t)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := trunkCmd(tag, args...)
	var out bytes.Buffer
	errOut := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = &out, errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("mcptrunk %s did not finish within %s\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), timeout, out.String(), errOut.String())
	}
	code = 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("mcptrunk %s: %v", strings.Join(args, " "), err)
	}
	checkNoRace(t, errOut)
	assertNoProcesses(t, tag, 5*time.Second)
	return out.String(), errOut.String(), code
}

// ---- the raw JSON-RPC client ----

// rpcError is a JSON-RPC error object as received.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message) }

// rawResponse is one response, result kept as the bytes received.
type rawResponse struct {
	Result json.RawMessage
	Err    *rpcError
}

// rawConn is a line-based JSON-RPC client over a process's stdin and
// stdout. It records every stdout line, answers the server's requests
// (roots/list with no roots, ping, anything else with method-not-found),
// and keeps notifications.
type rawConn struct {
	t      testing.TB
	name   string
	cmd    *exec.Cmd
	tag    string
	stdin  io.WriteCloser
	stderr *syncBuffer
	nextID atomic.Int64
	exited chan struct{} // closed when the process has been waited for
	read   chan struct{} // closed when stdout reached EOF

	writeMu sync.Mutex

	mu            sync.Mutex
	pending       map[string]chan rawResponse
	lines         [][]byte // every stdout line, as read
	notifications []json.RawMessage
	waitErr       error
}

// startRaw starts cmd and connects a rawConn to it. The process is closed
// at the end of the test (stdin closed, then killed after a grace period).
func startRaw(t testing.TB, name string, cmd *exec.Cmd) *rawConn {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &rawConn{
		t: t, name: name, cmd: cmd, stdin: stdin, stderr: &syncBuffer{},
		exited:  make(chan struct{}),
		read:    make(chan struct{}),
		pending: map[string]chan rawResponse{},
	}
	cmd.Stderr = c.stderr
	for _, kv := range cmd.Env {
		if v, ok := strings.CutPrefix(kv, tagEnv+"="); ok {
			c.tag = v
		}
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	go c.readLoop(stdout)
	go func() {
		<-c.read // Wait closes stdout: read everything first
		err := cmd.Wait()
		c.mu.Lock()
		c.waitErr = err
		c.mu.Unlock()
		close(c.exited)
	}()
	t.Cleanup(func() {
		c.shutdown(15 * time.Second)
		if cmd.Path == trunkBin {
			checkNoRace(t, c.stderr)
		}
	})
	return c
}

// startRawTrunk runs `mcptrunk serve --config cfg` under a raw client and
// performs the handshake.
func startRawTrunk(t testing.TB, ctx context.Context, cfg string) *rawConn {
	t.Helper()
	tag := newTag(t)
	c := startRaw(t, "mcptrunk", trunkCmd(tag, "serve", "--config", cfg))
	c.initialize(ctx)
	return c
}

// startRawDirect runs an upstream server directly under a raw client and
// performs the handshake.
func startRawDirect(t testing.TB, ctx context.Context, name string, argv ...string) *rawConn {
	t.Helper()
	tag := newTag(t)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), tagEnv+"="+tag)
	c := startRaw(t, name, cmd)
	c.initialize(ctx)
	return c
}

func (c *rawConn) readLoop(stdout io.Reader) {
	defer close(c.read)
	r := bufio.NewReaderSize(stdout, 1<<16)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			c.handleLine(line)
		}
		if err != nil {
			c.mu.Lock()
			for id, ch := range c.pending {
				close(ch)
				delete(c.pending, id)
			}
			c.mu.Unlock()
			return
		}
	}
}

func (c *rawConn) handleLine(line []byte) {
	c.mu.Lock()
	c.lines = append(c.lines, bytes.Clone(line))
	c.mu.Unlock()
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  *rpcError       `json:"error"`
	}
	if err := json.Unmarshal(line, &m); err != nil {
		return // purity tests look at c.lines
	}
	hasID := len(m.ID) > 0 && string(m.ID) != "null"
	switch {
	case m.Method != "" && hasID:
		go c.answer(m.ID, m.Method)
	case m.Method != "":
		c.mu.Lock()
		c.notifications = append(c.notifications, bytes.Clone(bytes.TrimSpace(line)))
		c.mu.Unlock()
	case hasID:
		c.mu.Lock()
		ch, ok := c.pending[string(m.ID)]
		delete(c.pending, string(m.ID))
		c.mu.Unlock()
		if ok {
			ch <- rawResponse{Result: m.Result, Err: m.Error}
		}
	}
}

// answer replies to a request the server sent.
func (c *rawConn) answer(id json.RawMessage, method string) {
	var frame string
	switch method {
	case "ping":
		frame = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, id)
	case "roots/list":
		frame = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"roots":[]}}`, id)
	default:
		frame = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, id)
	}
	_ = c.write([]byte(frame))
}

func (c *rawConn) write(frame []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.stdin.Write(append(frame, '\n'))
	return err
}

// call sends a request and returns its response. params may be a string or
// []byte of JSON, or any value to marshal; nil sends no params. A transport
// failure (process gone, ctx over) fails the test.
func (c *rawConn) call(ctx context.Context, method string, params any) rawResponse {
	c.t.Helper()
	resp, err := c.tryCall(ctx, method, params)
	if err != nil {
		c.t.Fatalf("%s: %s: %v\nstderr:\n%s", c.name, method, err, tail(c.stderr.String(), 3000))
	}
	return resp
}

func (c *rawConn) tryCall(ctx context.Context, method string, params any) (rawResponse, error) {
	id := strconv.FormatInt(c.nextID.Add(1), 10)
	ch := make(chan rawResponse, 1)
	c.mu.Lock()
	c.pending[id] = ch
	c.mu.Unlock()
	frame := `{"jsonrpc":"2.0","id":` + id + `,"method":` + mustJSON(method)
	if params != nil {
		frame += `,"params":` + string(rawJSON(params))
	}
	frame += `}`
	if err := c.write([]byte(frame)); err != nil {
		return rawResponse{}, fmt.Errorf("writing the request: %w", err)
	}
	select {
	case r, ok := <-ch:
		if !ok {
			return rawResponse{}, errors.New("the process closed its stdout before answering")
		}
		return r, nil
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return rawResponse{}, fmt.Errorf("no answer: %w", ctx.Err())
	}
}

// result calls and fails the test on a JSON-RPC error.
func (c *rawConn) result(ctx context.Context, method string, params any) json.RawMessage {
	c.t.Helper()
	r := c.call(ctx, method, params)
	if r.Err != nil {
		c.t.Fatalf("%s: %s %s: %v", c.name, method, rawJSON(params), r.Err)
	}
	return r.Result
}

func (c *rawConn) notify(method string, params any) {
	frame := `{"jsonrpc":"2.0","method":` + mustJSON(method)
	if params != nil {
		frame += `,"params":` + string(rawJSON(params))
	}
	if err := c.write([]byte(frame + `}`)); err != nil {
		c.t.Fatalf("%s: %s: %v", c.name, method, err)
	}
}

func (c *rawConn) initialize(ctx context.Context) json.RawMessage {
	c.t.Helper()
	res := c.result(ctx, "initialize", map[string]any{
		"protocolVersion": "2025-11-25",
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]string{"name": "mcptrunk-e2e-raw", "version": "0"},
	})
	c.notify("notifications/initialized", nil)
	return res
}

// list follows every page of a list and returns its items raw, in order.
func (c *rawConn) list(ctx context.Context, method, field string) []json.RawMessage {
	c.t.Helper()
	var items []json.RawMessage
	var params any
	for page := 0; page < 100; page++ {
		res := c.result(ctx, method, params)
		var p map[string]json.RawMessage
		if err := json.Unmarshal(res, &p); err != nil {
			c.t.Fatalf("%s: %s: %v", c.name, method, err)
		}
		var pageItems []json.RawMessage
		if raw, ok := p[field]; ok {
			if err := json.Unmarshal(raw, &pageItems); err != nil {
				c.t.Fatalf("%s: %s: field %s: %v", c.name, method, field, err)
			}
		}
		items = append(items, pageItems...)
		var cursor string
		if raw, ok := p["nextCursor"]; ok {
			_ = json.Unmarshal(raw, &cursor)
		}
		if cursor == "" {
			return items
		}
		params = map[string]string{"cursor": cursor}
	}
	c.t.Fatalf("%s: %s: more than 100 pages", c.name, method)
	return nil
}

// stdoutLines returns a copy of every line read from stdout so far.
func (c *rawConn) stdoutLines() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([][]byte(nil), c.lines...)
}

// closeStdin ends the session the way a host does.
func (c *rawConn) closeStdin() {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_ = c.stdin.Close()
}

// waitExit waits for the process to exit; false if it did not in time.
func (c *rawConn) waitExit(timeout time.Duration) bool {
	select {
	case <-c.exited:
		return true
	case <-time.After(timeout):
		return false
	}
}

// shutdown closes stdin, waits up to grace for an exit, then kills.
func (c *rawConn) shutdown(grace time.Duration) {
	c.closeStdin()
	if !c.waitExit(grace) {
		c.t.Errorf("%s did not exit within %s of stdin EOF; killing it", c.name, grace)
		_ = c.cmd.Process.Kill()
		<-c.exited
	}
}

// ---- the official SDK as the host ----

// sdkSession is a go-sdk client session to a process, with that process's
// stderr.
type sdkSession struct {
	*mcp.ClientSession
	stderr *syncBuffer
	tag    string
}

// connectSDK connects a go-sdk client to the command. The session is closed
// at the end of the test.
func connectSDK(t testing.TB, ctx context.Context, cmd *exec.Cmd, opts *mcp.ClientOptions) *sdkSession {
	t.Helper()
	tag := newTag(t)
	cmd.Env = append(os.Environ(), tagEnv+"="+tag)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if opts == nil {
		opts = &mcp.ClientOptions{}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcptrunk-e2e", Version: "0"}, opts)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 10 * time.Second}, nil)
	if err != nil {
		t.Fatalf("connecting to %s: %v\nstderr:\n%s", strings.Join(cmd.Args, " "), err, tail(stderr.String(), 3000))
	}
	s := &sdkSession{ClientSession: cs, stderr: stderr, tag: tag}
	t.Cleanup(func() {
		_ = cs.Close()
		if cmd.Path == trunkBin {
			checkNoRace(t, stderr)
		}
	})
	return s
}

// connectTrunk runs `mcptrunk serve --config cfg` with the SDK as the host.
func connectTrunk(t testing.TB, ctx context.Context, cfg string) *sdkSession {
	t.Helper()
	return connectSDK(t, ctx, exec.Command(trunkBin, "serve", "--config", cfg), nil)
}

// sdkCatalog is everything a server lists, through the SDK's iterators
// (which follow cursors).
type sdkCatalog struct {
	tools     []*mcp.Tool
	prompts   []*mcp.Prompt
	resources []*mcp.Resource
	templates []*mcp.ResourceTemplate
}

func listAll(t testing.TB, ctx context.Context, s *mcp.ClientSession) sdkCatalog {
	t.Helper()
	var cat sdkCatalog
	caps := s.InitializeResult().Capabilities
	if caps.Tools != nil {
		for tool, err := range s.Tools(ctx, nil) {
			if err != nil {
				t.Fatalf("tools/list: %v", err)
			}
			cat.tools = append(cat.tools, tool)
		}
	}
	if caps.Prompts != nil {
		for p, err := range s.Prompts(ctx, nil) {
			if err != nil {
				t.Fatalf("prompts/list: %v", err)
			}
			cat.prompts = append(cat.prompts, p)
		}
	}
	if caps.Resources != nil {
		for r, err := range s.Resources(ctx, nil) {
			if err != nil {
				t.Fatalf("resources/list: %v", err)
			}
			cat.resources = append(cat.resources, r)
		}
		for r, err := range s.ResourceTemplates(ctx, nil) {
			if err != nil {
				t.Fatalf("resources/templates/list: %v", err)
			}
			cat.templates = append(cat.templates, r)
		}
	}
	return cat
}

func (c sdkCatalog) toolNames() []string {
	var out []string
	for _, x := range c.tools {
		out = append(out, x.Name)
	}
	return out
}

func (c sdkCatalog) promptNames() []string {
	var out []string
	for _, x := range c.prompts {
		out = append(out, x.Name)
	}
	return out
}

func (c sdkCatalog) resourceURIs() []string {
	var out []string
	for _, x := range c.resources {
		out = append(out, x.URI)
	}
	return out
}

func (c sdkCatalog) templateURIs() []string {
	var out []string
	for _, x := range c.templates {
		out = append(out, x.URITemplate)
	}
	return out
}

// ---- JSON helpers ----

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// rawJSON returns params as JSON: strings and []byte are taken as JSON
// already.
func rawJSON(v any) json.RawMessage {
	switch x := v.(type) {
	case nil:
		return json.RawMessage("null")
	case json.RawMessage:
		return x
	case []byte:
		return x
	case string:
		return json.RawMessage(x)
	}
	return json.RawMessage(mustJSON(v))
}

// compact returns raw without insignificant whitespace; invalid JSON fails
// the test.
func compact(t testing.TB, raw []byte) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatalf("invalid JSON %q: %v", raw, err)
	}
	return b.String()
}

// field is one member of a JSON object, its value raw.
type field struct {
	key   string
	value json.RawMessage
}

// objectFields returns an object's members in the order they appear.
func objectFields(t testing.TB, raw []byte) []field {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if d, ok := tok.(json.Delim); err != nil || !ok || d != '{' {
		t.Fatalf("not a JSON object: %s", raw)
	}
	var out []field
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("decoding %s: %v", raw, err)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("decoding %s: %v", raw, err)
		}
		out = append(out, field{key: tok.(string), value: v})
	}
	return out
}

// getField returns the raw value of a top-level member ("" if absent).
func getField(t testing.TB, raw []byte, key string) json.RawMessage {
	t.Helper()
	for _, f := range objectFields(t, raw) {
		if f.key == key {
			return f.value
		}
	}
	return nil
}

func getString(t testing.TB, raw []byte, key string) string {
	t.Helper()
	v := getField(t, raw, key)
	if v == nil {
		return ""
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		t.Fatalf("field %q of %s is not a string", key, raw)
	}
	return s
}

// findItem returns the item of a list whose key field equals value.
func findItem(t testing.TB, items []json.RawMessage, key, value string) json.RawMessage {
	t.Helper()
	for _, it := range items {
		if getString(t, it, key) == value {
			return it
		}
	}
	return nil
}

// keysOf returns the key field of every item.
func keysOf(t testing.TB, items []json.RawMessage, key string) []string {
	t.Helper()
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, getString(t, it, key))
	}
	return out
}

// sameExceptField compares two objects member by member, in order, with
// compacted values, apart from one member whose values are given instead.
func sameExceptField(t testing.TB, what string, direct, through []byte, key, wantDirect, wantThrough string) {
	t.Helper()
	a, b := objectFields(t, direct), objectFields(t, through)
	if len(a) != len(b) {
		t.Errorf("%s: %d members directly, %d through the trunk:\ndirect:  %s\nthrough: %s", what, len(a), len(b), compact(t, direct), compact(t, through))
		return
	}
	for i := range a {
		if a[i].key != b[i].key {
			t.Errorf("%s: member %d is %q directly but %q through the trunk", what, i, a[i].key, b[i].key)
			continue
		}
		if a[i].key == key {
			if got := string(a[i].value); got != mustJSON(wantDirect) {
				t.Errorf("%s: direct %s = %s, want %q", what, key, got, wantDirect)
			}
			if got := string(b[i].value); got != mustJSON(wantThrough) {
				t.Errorf("%s: %s through the trunk = %s, want %q", what, key, got, wantThrough)
			}
			continue
		}
		if x, y := compact(t, a[i].value), compact(t, b[i].value); x != y {
			t.Errorf("%s: member %q differs:\ndirect:  %s\nthrough: %s", what, a[i].key, x, y)
		}
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

// eventually retries f until it returns nil or the deadline passes, then
// returns its last error.
func eventually(ctx context.Context, every time.Duration, f func() error) error {
	for {
		err := f()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(every):
		}
	}
}

// testCtx returns a context bounded by d (and by the test's deadline).
func testCtx(t testing.TB, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// exitErr is how the process ended (nil for exit status 0).
func (c *rawConn) exitErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var exit *exec.ExitError
	if errors.As(c.waitErr, &exit) {
		return exit
	}
	return c.waitErr
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
