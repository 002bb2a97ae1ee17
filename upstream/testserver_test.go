package upstream

// The upstream servers these tests talk to are real subprocesses: the test
// binary itself, re-executed with MCPTRUNK_TEST_SERVER=<mode>. TestMain sees
// the variable and runs a small stdio MCP server instead of the tests. The
// server speaks raw line-delimited JSON-RPC so every byte it sends is under
// the test's control, and it appends every line it receives to a log file
// the test reads back.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/testkit"
	"github.com/mcptrunk/mcptrunk/upstream/transport/stdio"
	"go.uber.org/goleak"
)

// Environment of a test server.
const (
	envMode   = "MCPTRUNK_TEST_SERVER" // the server mode; set means "be a server"
	envDir    = "MCPTRUNK_TEST_DIR"    // where the server writes its files
	envName   = "MCPTRUNK_TEST_NAME"   // the server's name: prefix of its files
	envTag    = "MCPTRUNK_TEST_TAG"    // marks every process a test started (see checkNoProcesses)
	envCaps   = "MCPTRUNK_TEST_CAPS"   // normal mode: capabilities to declare (comma list; default all)
	envDelay  = "MCPTRUNK_TEST_DELAY"  // a duration to wait before answering initialize
	envHoldB  = "MCPTRUNK_TEST_HOLDB"  // set: answer the first page of prompts/list only once the test releases it
	envStderr = "MCPTRUNK_TEST_SPAM"   // exit mode: stderr lines to write before the last words
	envBanner = "MCPTRUNK_TEST_BANNER" // a line to write to stdout first ($VARs expanded), as a server printing its own text there
)

// Server modes.
const (
	modeNormal     = "normal"     // paged lists, tools to call (see callTool)
	modeBurstInit  = "burst-init" // versioned tools; 5 tools/list_changed right after initialized
	modeBurstList  = "burst-list" // versioned tools; 5 tools/list_changed while page 2 is being asked for
	modeExit       = "exit"       // writes to stderr and exits 7 at once
	modeHang       = "hang"       // never answers anything; exits on stdin EOF
	modeStubborn   = "stubborn"   // normal, but ignores stdin EOF and SIGTERM
	modeGrandchild = "grandchild" // normal, after starting a grandchild that holds stdout and stderr
	modeSleep      = "sleep"      // the grandchild: sleeps
)

// Grace periods for the tests: shorter than the package's, so escalating to
// SIGKILL costs 1.5s rather than 4s, yet long enough that a loaded machine
// (the race detector, parallel packages) does not make a polite server look
// stubborn or cut a stderr drain short.
const (
	testStdinGrace  = time.Second
	testTermGrace   = 500 * time.Millisecond
	testOutputGrace = 500 * time.Millisecond
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(envMode); mode == modeTee {
		os.Exit(runTee())
	} else if mode != "" {
		os.Exit(runTestServer(mode))
	}
	stdio.StdinGrace, stdio.TermGrace, stdio.OutputGrace = testStdinGrace, testTermGrace, testOutputGrace
	// Every Host caches catalogs: never in the user's cache. (A harness
	// gives each test a directory of its own.)
	cache, err := os.MkdirTemp("", "mcptrunk-upstream-cache-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testkit.KeepGoCache() // ConformanceServer's go build keeps the build cache
	os.Setenv("XDG_CACHE_HOME", cache)
	testTempDir = cache
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) { os.RemoveAll(cache) }))
}

// testTempDir is a directory for the whole test binary, removed when it
// ends (TestMain).
var testTempDir string

// The lists of the normal server, three pages each, exactly as sent. Odd
// spacing, escapes, HTML characters and unknown fields must all survive.
var (
	testToolPages = [][]string{
		{
			`{"name":"alpha","description":"first <tool> & \"more\"","inputSchema":{"type":"object","properties":{"q":{"type":"string"}}}, "x-vendor": [1, 2.50, null]}`,
			`{"name":"beta","title":"Bêta \u00e9","inputSchema":{"type":"object"},"_meta":{"k":"v"}}`,
		},
		{
			`{"name":"gamma","inputSchema":{"type":"object"}}`,
			`{"description":"has no name, so it is skipped","inputSchema":{"type":"object"}}`,
		},
		{
			`{ "name" : "delta", "inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true} }`,
		},
	}
	testPromptPages = [][]string{
		{`{"name":"p1","arguments":[{"name":"a","required":true}]}`},
		{`{"name":"p2","description":"<b>bold</b>"}`},
		{`{"name":"p3"}`},
	}
	testResourcePages = [][]string{
		{`{"uri":"file:///a.txt","name":"a","mimeType":"text/plain"}`},
		{`{"uri":"mem://b","name":"b"}`},
		{`{"uri":"https://example.com/c?x=1&y=<2>","name":"c"}`},
	}
	testTemplatePages = [][]string{
		{`{"uriTemplate":"file:///{path}","name":"files"}`},
		{`{"uriTemplate":"mem://{id}","name":"mem"}`},
		{`{"uriTemplate":"db://{table}/{row}","name":"db"}`},
	}
)

// Fixed answers of the normal server, exactly as sent.
const (
	testServerInfo   = `{"name":"testserver","version":"1.2.3","x":"<&>"}`
	testInstructions = "Use the tools.\nCarefully."
	testEchoResult   = `{"content":[{"type":"text","text":"echo <&> \u00e9"}], "structuredContent":{"n": 1.50},"_meta":{}}`
	testErrorData    = `{"x":[1,2]}`
	testErrorMessage = "the tool refused: <reason> & more"
	testLogParams    = `{"level":"info","logger":"test","data":{"msg":"héllo <&>"}}`
	testSampleParams = `{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":5}`
)

// fakeServer is one server process's state. Everything runs on the read
// loop, one message at a time, so the order of what the server writes is
// the order in which the tests reason about it.
type fakeServer struct {
	mode    string
	dir     string
	name    string
	log     *os.File
	version int  // of the tool list in the burst modes
	listed  bool // the tool list was answered in full once
	burstd  bool // burst-list: the burst was sent
	deaf    bool // after the deaf tool: nothing is answered any more, pings neither
	// server-to-client requests awaiting their response: their id -> the
	// tools/call waiting for it
	waiting map[string]json.RawMessage
}

type wireMessage struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

func runTestServer(mode string) int {
	s := &fakeServer{
		mode:    mode,
		dir:     os.Getenv(envDir),
		name:    os.Getenv(envName),
		waiting: map[string]json.RawMessage{},
	}
	if s.dir != "" && s.name != "" {
		if _, err := os.Stat(s.path("refuse")); err == nil {
			// The test made this server unable to start, without a change
			// of its spec (lazy_test.go).
			fmt.Fprintln(os.Stderr, "refusing to start: the test said so")
			return 9
		}
		s.writeFile("pid", strconv.Itoa(os.Getpid()))
		s.appendShared("start " + s.name)
		f, err := os.OpenFile(s.path("log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, "test server:", err)
			return 1
		}
		s.log = f
	}

	if banner := os.Getenv(envBanner); banner != "" {
		fmt.Println(os.ExpandEnv(banner))
	}
	switch mode {
	case modeSleep:
		time.Sleep(5 * time.Minute)
		return 0
	case modeExit:
		n, _ := strconv.Atoi(os.Getenv(envStderr))
		w := bufio.NewWriter(os.Stderr)
		fmt.Fprintln(w, "starting the exit server")
		for i := range n {
			fmt.Fprintf(w, "spam line %d\n", i)
		}
		fmt.Fprintln(w, `fatal: cannot open database "/nonexistent"`)
		_ = w.Flush()
		return 7
	case modeStubborn:
		signal.Ignore(syscall.SIGTERM)
	case modeGrandchild:
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), envMode+"="+modeSleep, envName+"=") // no files of its own
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr                      // holds the pipes open
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "test server:", err)
			return 1
		}
		s.writeFile("grandchild", strconv.Itoa(cmd.Process.Pid))
	}

	r := bufio.NewReaderSize(os.Stdin, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if len(strings.TrimSpace(string(line))) > 0 {
			if s.log != nil {
				_, _ = s.log.Write(line)
			}
			s.handle(line)
		}
		if err != nil {
			break
		}
	}
	if mode == modeStubborn {
		time.Sleep(time.Hour) // ignores EOF too; must be killed
	}
	return 0
}

func (s *fakeServer) path(kind string) string {
	return filepath.Join(s.dir, s.name+"."+kind)
}

// writeFile writes atomically, so a test polling for the file never reads
// half of it.
func (s *fakeServer) writeFile(kind, content string) {
	tmp := s.path(kind) + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err == nil {
		_ = os.Rename(tmp, s.path(kind))
	}
}

// awaitRelease waits for the test to create the server's release file.
func (s *fakeServer) awaitRelease() {
	for range 6000 {
		if _, err := os.Stat(s.path("release")); err == nil {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// appendShared appends a line to the log every server of a test shares.
func (s *fakeServer) appendShared(line string) {
	f, err := os.OpenFile(filepath.Join(s.dir, "shared.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	_, _ = f.WriteString(line + "\n")
	_ = f.Close()
}

func (s *fakeServer) send(format string, args ...any) {
	// One write per message: os.Stdout is unbuffered.
	_, _ = os.Stdout.WriteString(fmt.Sprintf(format, args...) + "\n")
}

func (s *fakeServer) result(id json.RawMessage, result string) {
	s.send(`{"jsonrpc":"2.0","id":%s,"result":%s}`, id, result)
}

func (s *fakeServer) error(id json.RawMessage, code int, msg, data string) {
	m, _ := json.Marshal(msg)
	if data != "" {
		s.send(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s,"data":%s}}`, id, code, m, data)
		return
	}
	s.send(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}`, id, code, m)
}

func (s *fakeServer) notify(method, params string) {
	if params == "" {
		s.send(`{"jsonrpc":"2.0","method":%q}`, method)
		return
	}
	s.send(`{"jsonrpc":"2.0","method":%q,"params":%s}`, method, params)
}

// burst sends five tools/list_changed, changing the tool list before each.
func (s *fakeServer) burst() {
	for range 5 {
		s.version++
		s.notify("notifications/tools/list_changed", "")
	}
}

func (s *fakeServer) handle(line []byte) {
	var m wireMessage
	if err := json.Unmarshal(line, &m); err != nil {
		fmt.Fprintf(os.Stderr, "test server: bad line %q: %v\n", line, err)
		return
	}
	if m.Method == "" { // a response to one of our requests
		s.answered(m)
		return
	}
	if s.mode == modeHang || s.deaf {
		return
	}
	if len(m.ID) == 0 { // a notification
		if m.Method == "notifications/initialized" && s.mode == modeBurstInit {
			s.burst()
		}
		return
	}
	switch m.Method {
	case "initialize":
		if d, err := time.ParseDuration(os.Getenv(envDelay)); err == nil {
			time.Sleep(d)
		}
		s.result(m.ID, fmt.Sprintf(`{"protocolVersion":"2025-06-18","capabilities":%s,"serverInfo":%s,"instructions":%q}`,
			s.capabilities(), testServerInfo, testInstructions))
	case "ping":
		s.result(m.ID, `{}`)
	case "tools/list":
		if s.mode == modeBurstInit || s.mode == modeBurstList {
			s.versionedTools(m)
			return
		}
		s.page(m, "tools", testToolPages)
	case "prompts/list":
		if os.Getenv(envHoldB) != "" && len(m.Params) == 0 {
			s.awaitRelease()
		}
		s.page(m, "prompts", testPromptPages)
	case "resources/list":
		s.page(m, "resources", testResourcePages)
	case "resources/templates/list":
		s.page(m, "resourceTemplates", testTemplatePages)
	case "tools/call":
		s.toolArgs(m)
	default:
		s.error(m.ID, -32601, "method not found: "+m.Method, "")
	}
}

func (s *fakeServer) capabilities() string {
	caps := []string{"tools", "prompts", "resources"}
	if v, ok := os.LookupEnv(envCaps); ok {
		caps = nil
		if v != "" {
			caps = strings.Split(v, ",")
		}
	}
	var parts []string
	for _, c := range caps {
		switch c {
		case "tools", "prompts":
			parts = append(parts, fmt.Sprintf(`%q:{"listChanged":true}`, c))
		case "resources":
			parts = append(parts, `"resources":{"subscribe":true,"listChanged":true}`)
		}
	}
	parts = append(parts, `"logging":{}`)
	return "{" + strings.Join(parts, ",") + "}"
}

func pageCursor(field string, page int) string { return fmt.Sprintf("%s/page-%d", field, page) }

// page answers one page of a paged list; the cursor names the page.
func (s *fakeServer) page(m wireMessage, field string, pages [][]string) {
	n, ok := s.pageNumber(m, field, len(pages))
	if !ok {
		return
	}
	res := `{"` + field + `":[` + strings.Join(pages[n], ",") + `]`
	if n+1 < len(pages) {
		res += `,"nextCursor":"` + pageCursor(field, n+1) + `"`
	} else if field == "tools" && !s.listed {
		s.listed = true
		s.appendShared("done " + s.name) // about to answer phase A for the first time
	}
	s.result(m.ID, res+"}")
}

func (s *fakeServer) pageNumber(m wireMessage, field string, pages int) (int, bool) {
	var p struct {
		Cursor string `json:"cursor"`
	}
	if len(m.Params) > 0 {
		_ = json.Unmarshal(m.Params, &p)
	}
	if p.Cursor == "" {
		return 0, true
	}
	for n := 1; n < pages; n++ {
		if p.Cursor == pageCursor(field, n) {
			return n, true
		}
	}
	s.error(m.ID, -32602, "unknown cursor "+p.Cursor, "")
	return 0, false
}

// versionedTools answers the two-page tool list of the burst modes, whose
// names carry the list's version.
func (s *fakeServer) versionedTools(m wireMessage) {
	n, ok := s.pageNumber(m, "tools", 2)
	if !ok {
		return
	}
	if n == 1 && s.mode == modeBurstList && !s.burstd {
		s.burstd = true
		s.burst() // the list changes while the client is reading it
	}
	if n == 0 {
		s.result(m.ID, fmt.Sprintf(`{"tools":[%s],"nextCursor":%q}`, versionedTool(s.version, "one"), pageCursor("tools", 1)))
		return
	}
	s.result(m.ID, fmt.Sprintf(`{"tools":[%s]}`, versionedTool(s.version, "two")))
}

func versionedTool(version int, which string) string {
	return fmt.Sprintf(`{"name":"v%d-%s","inputSchema":{"type":"object"}}`, version, which)
}

// callTool runs a tool: what it does is in its name.
func (s *fakeServer) toolArgs(m wireMessage) {
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	_ = json.Unmarshal(m.Params, &p)
	switch p.Name {
	case "echo":
		s.result(m.ID, testEchoResult)
	case "fail":
		s.error(m.ID, -32042, testErrorMessage, testErrorData)
	case "slow":
		// never answered: the client must time out or cancel
	case "deaf":
		// Answer, then stop answering anything while staying alive: a
		// wedged server that only health checks can tell from an idle one.
		s.result(m.ID, `{"content":[]}`)
		s.deaf = true
	case "crash":
		fmt.Fprintln(os.Stderr, "panic: simulated crash in tool crash")
		os.Exit(3)
	case "hangup":
		// Stop listening first, so the client's next write fails; then
		// answer, and go away a little later.
		_ = os.Stdin.Close()
		s.result(m.ID, `{"content":[]}`)
		time.Sleep(300 * time.Millisecond)
		fmt.Fprintln(os.Stderr, "hanging up for good")
		os.Exit(4)
	case "burst":
		s.burst()
		s.result(m.ID, `{"content":[]}`)
	case "sample":
		// A log message, then a request of the server's own; the tool's
		// result is whatever answer the request got.
		s.notify("notifications/message", testLogParams)
		params := testSampleParams
		if string(p.Arguments) == `{"fail":true}` {
			params = `{"fail":true}`
		}
		s.waiting[`"s-1"`] = m.ID
		s.send(`{"jsonrpc":"2.0","id":"s-1","method":"sampling/createMessage","params":%s}`, params)
	case "ping-client":
		s.waiting[`"p-1"`] = m.ID
		s.send(`{"jsonrpc":"2.0","id":"p-1","method":"ping"}`)
	case "sample-cancel":
		// Ask, change our mind, and answer the tool without waiting.
		s.send(`{"jsonrpc":"2.0","id":"s-2","method":"sampling/createMessage","params":%s}`, testSampleParams)
		s.notify("notifications/cancelled", `{"requestId":"s-2","reason":"changed my mind"}`)
		s.result(m.ID, `{"content":[]}`)
	default:
		s.error(m.ID, -32602, "unknown tool "+p.Name, "")
	}
}

// answered completes the tools/call that was waiting for the client's
// response to one of the server's requests.
func (s *fakeServer) answered(m wireMessage) {
	callID, ok := s.waiting[string(m.ID)]
	if !ok {
		return
	}
	delete(s.waiting, string(m.ID))
	got := m.Result
	if len(got) == 0 {
		got = m.Error
	}
	s.result(callID, `{"content":[],"got":`+string(got)+`}`)
}
