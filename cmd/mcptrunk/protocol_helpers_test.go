package main

// Helpers for the protocol-fidelity tests (protocol_test.go) and the
// differential tests (differential_test.go):
//
//   - the third-party upstreams: go-sdk's conformance everything-server
//     (built once per run into binDir, so the leak check covers it) and the
//     npm server-everything;
//   - taps: an upstream started through `sh -c 'tee IN | server | tee OUT'`,
//     so a test can read exactly what the upstream received from the trunk
//     and what it sent back, without changing the upstream;
//   - a go-sdk host that records everything the trunk sends it (progress,
//     log messages, resource updates, list_changed, and the server-to-client
//     requests it answered) and answers sampling, elicitation and roots
//     deterministically.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ---- third-party upstreams ----

var conformanceBuild struct {
	once sync.Once
	path string
	err  error
}

// conformanceBin builds go-sdk's conformance everything-server (the go-sdk
// version in go.mod) into binDir once per run and returns its path.
func conformanceBin(t testing.TB) string {
	t.Helper()
	conformanceBuild.once.Do(func() {
		path := filepath.Join(binDir, "everything-server")
		cmd := exec.Command("go", "build", "-o", path, "github.com/modelcontextprotocol/go-sdk/conformance/everything-server")
		cmd.Dir = moduleRoot
		out, err := cmd.CombinedOutput()
		if err != nil {
			conformanceBuild.err = fmt.Errorf("building go-sdk's conformance everything-server: %v\n%s", err, out)
			return
		}
		conformanceBuild.path = path
	})
	if conformanceBuild.err != nil {
		t.Fatal(conformanceBuild.err)
	}
	return conformanceBuild.path
}

// probeSource is a small go-sdk stdio server that sends what the other
// upstreams never do: a URL-mode elicitation followed by
// notifications/elicitation/complete, an elicitation it abandons (so it
// sends notifications/cancelled for its own request), and a ping to its
// client. It is built from this source by probeBin.
const probeSource = `package main

import (
	"context"
	"fmt"
	"log"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// progress the client sent for this server's own requests.
var (
	mu       sync.Mutex
	progress []string
)

type idArgs struct {
	ID string ` + "`json:\"id\"`" + `
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func main() {
	s := mcp.NewServer(&mcp.Implementation{Name: "probe", Version: "0"}, &mcp.ServerOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationServerRequest) {
			mu.Lock()
			progress = append(progress, fmt.Sprintf("%v:%v/%v", req.Params.ProgressToken, req.Params.Progress, req.Params.Total))
			mu.Unlock()
		},
	})
	mcp.AddTool(s, &mcp.Tool{Name: "sampling_with_progress", Description: "sampling with progressToken 7; returns the progress the client sent for it"},
		func(ctx context.Context, req *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, any, error) {
			p := &mcp.CreateMessageParams{MaxTokens: 10, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "progress please"}}}}
			p.SetProgressToken(7)
			if _, err := req.Session.CreateMessage(ctx, p); err != nil {
				return nil, nil, err
			}
			deadline := time.Now().Add(2 * time.Second)
			for {
				mu.Lock()
				got := strings.Join(progress, " ")
				n := len(progress)
				mu.Unlock()
				if n >= 2 || time.Now().After(deadline) {
					time.Sleep(100 * time.Millisecond) // a third would show now
					mu.Lock()
					got = strings.Join(progress, " ")
					progress = nil
					mu.Unlock()
					return text("progress: " + got), nil, nil
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	mcp.AddTool(s, &mcp.Tool{Name: "url_elicitation", Description: "URL-mode elicitation, then elicitation/complete"},
		func(ctx context.Context, req *mcp.CallToolRequest, in idArgs) (*mcp.CallToolResult, any, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Mode: "url", URL: "https://example.com/consent", Message: "Please consent", ElicitationID: in.ID})
			if err != nil {
				return nil, nil, err
			}
			if err := req.Session.NotifyElicitationComplete(ctx, &mcp.ElicitationCompleteParams{ElicitationID: in.ID}); err != nil {
				return nil, nil, err
			}
			return text("action=" + res.Action), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "abandoned_elicitation", Description: "asks, then gives up after 300ms"},
		func(ctx context.Context, req *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, any, error) {
			ectx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			defer cancel()
			_, err := req.Session.Elicit(ectx, &mcp.ElicitParams{Message: "block: never mind", RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"type": "string"}}}})
			return text(fmt.Sprintf("gave up: %v", err)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "ping_client", Description: "pings the client"},
		func(ctx context.Context, req *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, any, error) {
			return text(fmt.Sprintf("ping: %v", req.Session.Ping(ctx, nil))), nil, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Print(err)
	}
}
`

var probeBuild struct {
	once sync.Once
	path string
	err  error
}

// probeBin builds probeSource into binDir once per run.
func probeBin(t testing.TB) string {
	t.Helper()
	probeBuild.once.Do(func() {
		dir := filepath.Join(binDir, "probe-src")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			probeBuild.err = err
			return
		}
		src := filepath.Join(dir, "main.go")
		if err := os.WriteFile(src, []byte(probeSource), 0o644); err != nil {
			probeBuild.err = err
			return
		}
		path := filepath.Join(binDir, "mcptrunk-probe")
		cmd := exec.Command("go", "build", "-o", path, src)
		cmd.Dir = moduleRoot // the module's go-sdk
		if out, err := cmd.CombinedOutput(); err != nil {
			probeBuild.err = fmt.Errorf("building the probe server: %v\n%s", err, out)
			return
		}
		probeBuild.path = path
	})
	if probeBuild.err != nil {
		t.Fatal(probeBuild.err)
	}
	return probeBuild.path
}

// everythingArgv returns the command line of server-everything over stdio,
// failing (not skipping) when it is not installed.
func everythingArgv(t testing.TB) []string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is needed to run server-everything: %v", err)
	}
	script := filepath.Join(npmModules, "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(script); err != nil {
		t.Fatalf("server-everything is not installed (%v): run `make npm` in %s", err, moduleRoot)
	}
	return []string{node, script, "stdio"}
}

// slowTimeouts suit node servers on a busy two-core machine.
var slowTimeouts = map[string]any{"connect": "60s", "list": "60s", "call": "60s"}

// ---- taps ----

// tap records one upstream's traffic: in holds every line the upstream read
// from the trunk, out every line it wrote back.
type tap struct {
	in, out string
}

// tapped returns a config entry that runs argv behind two tees. The
// pipeline ends when the trunk closes the upstream's stdin (tee sees EOF,
// then the server does), and the trunk's process-group kill covers all of
// it.
func tapped(t testing.TB, argv ...string) (server, *tap) {
	t.Helper()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatalf("the taps need sh: %v", err)
	}
	dir := t.TempDir()
	tp := &tap{in: filepath.Join(dir, "in.jsonl"), out: filepath.Join(dir, "out.jsonl")}
	script := `in=$1; out=$2; shift 2; tee -a "$in" | "$@" | tee -a "$out"`
	args := append([]string{"-c", script, "tap", tp.in, tp.out}, argv...)
	return server{"command": sh, "args": args}, tp
}

// tapMsg is one JSON-RPC message seen by a tap.
type tapMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *rpcError       `json:"error"`
	Raw    string          `json:"-"`
}

func (m tapMsg) String() string { return m.Raw }

func readTap(path string) []tapMsg {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []tapMsg
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		var m tapMsg
		if len(line) == 0 || json.Unmarshal(line, &m) != nil {
			continue
		}
		m.Raw = string(line)
		out = append(out, m)
	}
	return out
}

// received is every message the upstream has read so far.
func (tp *tap) received() []tapMsg { return readTap(tp.in) }

// sent is every message the upstream has written so far.
func (tp *tap) sent() []tapMsg { return readTap(tp.out) }

// waitReceived waits until the upstream has read a message matching pred
// and returns the first one.
func (tp *tap) waitReceived(t testing.TB, ctx context.Context, what string, pred func(tapMsg) bool) tapMsg {
	t.Helper()
	return waitTap(t, ctx, what, tp.received, pred)
}

// waitSent waits until the upstream has written a message matching pred.
func (tp *tap) waitSent(t testing.TB, ctx context.Context, what string, pred func(tapMsg) bool) tapMsg {
	t.Helper()
	return waitTap(t, ctx, what, tp.sent, pred)
}

// waitAnswered waits until the upstream has sent a request matching pred
// and received the answer to it; it returns that answer.
func (tp *tap) waitAnswered(t testing.TB, ctx context.Context, what string, pred func(tapMsg) bool) tapMsg {
	t.Helper()
	req := tp.waitSent(t, ctx, what, pred)
	return tp.waitReceived(t, ctx, "the answer to "+what, func(m tapMsg) bool {
		return m.Method == "" && string(m.ID) == string(req.ID)
	})
}

func waitTap(t testing.TB, ctx context.Context, what string, read func() []tapMsg, pred func(tapMsg) bool) tapMsg {
	t.Helper()
	var found tapMsg
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err := eventually(ctx, 20*time.Millisecond, func() error {
		for _, m := range read() {
			if pred(m) {
				found = m
				return nil
			}
		}
		return fmt.Errorf("not seen")
	})
	if err != nil {
		var lines []string
		for _, m := range read() {
			lines = append(lines, tail(m.Raw, 300))
		}
		t.Fatalf("the tap never saw %s; it saw:\n%s", what, strings.Join(lines, "\n"))
	}
	return found
}

func isMethod(method string) func(tapMsg) bool {
	return func(m tapMsg) bool { return m.Method == method }
}

// ---- the recording go-sdk host ----

// hostRec records what the trunk (or a server, for direct sessions) sends
// to a go-sdk host.
type hostRec struct {
	mu          sync.Mutex
	progress    []*mcp.ProgressNotificationParams
	logs        []*mcp.LoggingMessageParams
	updated     []string
	listChanged map[string]int
	received    map[string]int // every method received (requests and notifications)
	sampling    []*mcp.CreateMessageParams
	elicit      []*mcp.ElicitParams
	// elicitComplete: the ids of notifications/elicitation/complete;
	// elicitCancelled: blocking elicitations whose ctx the peer cancelled.
	elicitComplete  []string
	elicitCancelled int
}

func newHostRec() *hostRec {
	return &hostRec{listChanged: map[string]int{}, received: map[string]int{}}
}

func (r *hostRec) progressFor(token any) []*mcp.ProgressNotificationParams {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*mcp.ProgressNotificationParams
	for _, p := range r.progress {
		if fmt.Sprint(p.ProgressToken) == fmt.Sprint(token) {
			out = append(out, p)
		}
	}
	return out
}

func (r *hostRec) logsSnapshot() []*mcp.LoggingMessageParams {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*mcp.LoggingMessageParams(nil), r.logs...)
}

func (r *hostRec) updatedSnapshot() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.updated...)
}

func (r *hostRec) count(method string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.received[method]
}

// hostConfig chooses what the host declares.
type hostConfig struct {
	// full: sampling and elicitation handlers and roots (go-sdk's default
	// roots capability, with listChanged). Otherwise no capability at all.
	full bool
	// roots the host offers when full.
	roots []*mcp.Root
	// urlElicitation: also declare URL-mode elicitation (full only).
	urlElicitation bool
}

// samplingAnswer is the host's deterministic reply to sampling/createMessage.
func samplingAnswer(p *mcp.CreateMessageParams) *mcp.CreateMessageResult {
	prompt := ""
	if len(p.Messages) > 0 {
		if tc, ok := p.Messages[0].Content.(*mcp.TextContent); ok {
			prompt = tc.Text
		}
	}
	return &mcp.CreateMessageResult{
		Model:      "mcptrunk-test-model",
		Role:       "assistant",
		Content:    &mcp.TextContent{Text: "sampled: " + prompt},
		StopReason: "endTurn",
	}
}

// hostRejects marks a sampling prompt the host refuses, with this error.
const hostRejects = "reject:"

var hostRejection = &jsonrpc.Error{Code: -1, Message: "User rejected sampling request", Data: json.RawMessage(`{"reason":"the test said no"}`)}

// hostBlocks marks an elicitation message the host never answers: it waits
// for the request to be cancelled (or 20s).
const hostBlocks = "block:"

// elicitAnswer accepts a form elicitation with a value for every required
// property (defaults are filled in by the SDK).
func elicitAnswer(p *mcp.ElicitParams) *mcp.ElicitResult {
	if p.Mode == "url" {
		return &mcp.ElicitResult{Action: "decline"}
	}
	content := map[string]any{}
	schema, _ := p.RequestedSchema.(map[string]any)
	props, _ := schema["properties"].(map[string]any)
	required, _ := schema["required"].([]any)
	for _, r := range required {
		name, _ := r.(string)
		prop, _ := props[name].(map[string]any)
		switch prop["type"] {
		case "boolean":
			content[name] = true
		case "integer", "number":
			content[name] = 7
		default:
			content[name] = "Ada"
		}
	}
	return &mcp.ElicitResult{Action: "accept", Content: content}
}

// hostOptions returns client options that record into rec.
func hostOptions(rec *hostRec, cfg hostConfig) *mcp.ClientOptions {
	opts := &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			rec.mu.Lock()
			rec.progress = append(rec.progress, req.Params)
			rec.mu.Unlock()
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			rec.mu.Lock()
			rec.logs = append(rec.logs, req.Params)
			rec.mu.Unlock()
		},
		ElicitationCompleteHandler: func(_ context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
			rec.mu.Lock()
			rec.elicitComplete = append(rec.elicitComplete, req.Params.ElicitationID)
			rec.mu.Unlock()
		},
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			rec.mu.Lock()
			rec.updated = append(rec.updated, req.Params.URI)
			rec.mu.Unlock()
		},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			rec.mu.Lock()
			rec.listChanged["tools"]++
			rec.mu.Unlock()
		},
		PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) {
			rec.mu.Lock()
			rec.listChanged["prompts"]++
			rec.mu.Unlock()
		},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			rec.mu.Lock()
			rec.listChanged["resources"]++
			rec.mu.Unlock()
		},
	}
	if cfg.full {
		opts.CreateMessageHandler = func(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			rec.mu.Lock()
			rec.sampling = append(rec.sampling, req.Params)
			rec.mu.Unlock()
			if len(req.Params.Messages) > 0 {
				if tc, ok := req.Params.Messages[0].Content.(*mcp.TextContent); ok && strings.HasPrefix(tc.Text, hostRejects) {
					return nil, hostRejection
				}
			}
			if tok := req.Params.GetProgressToken(); tok != nil {
				// Report progress for the request, as a host may.
				for i := 1; i <= 2; i++ {
					_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: 2})
				}
			}
			return samplingAnswer(req.Params), nil
		}
		opts.ElicitationHandler = func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			rec.mu.Lock()
			rec.elicit = append(rec.elicit, req.Params)
			rec.mu.Unlock()
			if strings.HasPrefix(req.Params.Message, hostBlocks) {
				select {
				case <-ctx.Done():
					rec.mu.Lock()
					rec.elicitCancelled++
					rec.mu.Unlock()
					return nil, ctx.Err()
				case <-time.After(20 * time.Second):
					return &mcp.ElicitResult{Action: "cancel"}, nil
				}
			}
			return elicitAnswer(req.Params), nil
		}
		if cfg.urlElicitation {
			opts.Capabilities = &mcp.ClientCapabilities{
				RootsV2:     &mcp.RootCapabilities{ListChanged: true},
				Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}},
			}
		}
	} else {
		// An empty struct disables go-sdk's default roots capability too.
		opts.Capabilities = &mcp.ClientCapabilities{}
	}
	return opts
}

// host is a go-sdk client session plus what it recorded.
type host struct {
	*mcp.ClientSession
	client *mcp.Client
	rec    *hostRec
	stderr *syncBuffer
}

// connectHost starts cmd under a recording go-sdk client. version pins the
// protocol revision ("" is the SDK's default, which probes server/discover
// first). The session is closed at the end of the test.
func connectHost(t testing.TB, ctx context.Context, cmd *exec.Cmd, cfg hostConfig, version string) *host {
	t.Helper()
	tag := newTag(t)
	cmd.Env = append(os.Environ(), tagEnv+"="+tag)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	rec := newHostRec()
	client := mcp.NewClient(&mcp.Implementation{Name: "mcptrunk-protocol-test", Version: "0"}, hostOptions(rec, cfg))
	client.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			rec.mu.Lock()
			rec.received[method]++
			rec.mu.Unlock()
			return next(ctx, method, req)
		}
	})
	if cfg.full && len(cfg.roots) > 0 {
		client.AddRoots(cfg.roots...)
	}
	var sessOpts *mcp.ClientSessionOptions
	if version != "" {
		sessOpts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 10 * time.Second}, sessOpts)
	if err != nil {
		t.Fatalf("connecting to %s: %v\nstderr:\n%s", strings.Join(cmd.Args, " "), err, tail(stderr.String(), 3000))
	}
	t.Cleanup(func() {
		_ = cs.Close()
		checkNoRace(t, stderr)
		assertNoProcesses(t, tag, 15*time.Second)
	})
	return &host{ClientSession: cs, client: client, rec: rec, stderr: stderr}
}

// trunkHost runs `mcptrunk serve` on cfg under a recording go-sdk host.
func trunkHost(t testing.TB, ctx context.Context, cfg string, hc hostConfig, version string) *host {
	t.Helper()
	return connectHost(t, ctx, exec.Command(trunkBin, "serve", "--config", cfg), hc, version)
}

// directHost runs an upstream directly under a recording go-sdk host.
func directHost(t testing.TB, ctx context.Context, argv []string, hc hostConfig, version string) *host {
	t.Helper()
	return connectHost(t, ctx, exec.Command(argv[0], argv[1:]...), hc, version)
}

// toolNames lists a session's tools (every page).
func toolNames(t testing.TB, ctx context.Context, s *mcp.ClientSession) []string {
	t.Helper()
	var names []string
	for tool, err := range s.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		names = append(names, tool.Name)
	}
	return names
}

// waitTools waits until the session lists every tool in want and returns
// the list it saw last.
func waitTools(t testing.TB, ctx context.Context, s *mcp.ClientSession, want ...string) []string {
	t.Helper()
	var names []string
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err := eventually(wctx, 100*time.Millisecond, func() error {
		names = toolNames(t, ctx, s)
		var missing []string
		for _, w := range want {
			if !slices.Contains(names, w) {
				missing = append(missing, w)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("missing %q", missing)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("tools never listed: %v; listed: %q", err, names)
	}
	return names
}

// waitFor polls cond every 20ms until it holds or d passes.
func waitFor(ctx context.Context, d time.Duration, cond func() bool) bool {
	wctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return eventually(wctx, 20*time.Millisecond, func() error {
		if cond() {
			return nil
		}
		return fmt.Errorf("not yet")
	}) == nil
}

// callText calls a tool and returns its text content, failing on an error.
func callText(t testing.TB, ctx context.Context, s *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	if args == nil {
		args = map[string]any{} // go-sdk sends null for nil, which zod-based servers reject
	}
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("calling %s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("calling %s: isError: %s", name, mustJSON(res))
	}
	return toolText(res)
}

// ---- raw-client additions ----

// rawInit starts mcptrunk serve under a raw client and sends an initialize
// with the given protocol version and capabilities (JSON).
func rawInit(t testing.TB, ctx context.Context, cfg, version, caps string) (*rawConn, json.RawMessage) {
	t.Helper()
	c := startRaw(t, "mcptrunk", trunkCmd(newTag(t), "serve", "--config", cfg))
	res := c.result(ctx, "initialize", `{"protocolVersion":`+mustJSON(version)+`,"capabilities":`+caps+`,"clientInfo":{"name":"mcptrunk-protocol-raw","version":"0"}}`)
	c.notify("notifications/initialized", nil)
	return c, res
}

// rawNotes returns the notifications with method the raw client has got.
func rawNotes(c *rawConn, method string) []json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []json.RawMessage
	for _, n := range c.notifications {
		var m struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(n, &m) == nil && m.Method == method {
			out = append(out, n)
		}
	}
	return out
}

// rawSend writes a request with a chosen id and returns where its response
// will arrive.
func rawSend(t testing.TB, c *rawConn, id int, method string, params any) chan rawResponse {
	t.Helper()
	key := fmt.Sprint(id)
	ch := make(chan rawResponse, 1)
	c.mu.Lock()
	c.pending[key] = ch
	c.mu.Unlock()
	frame := `{"jsonrpc":"2.0","id":` + key + `,"method":` + mustJSON(method) + `,"params":` + string(rawJSON(params)) + `}`
	if err := c.write([]byte(frame)); err != nil {
		t.Fatalf("%s: writing %s: %v", c.name, method, err)
	}
	return ch
}

// ---- JSON normalisation for comparisons ----

// unnamespace walks a decoded JSON value and strips mcptrunk://<server>/
// from every "uri" member, counting the members it rewrote. It fails the
// test on a "uri" member that is not in the namespaced form (the trunk must
// rewrite every URI a result carries).
func unnamespace(t testing.TB, v any, server string, rewritten *int) any {
	t.Helper()
	prefix := "mcptrunk://" + server + "/"
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if s, ok := val.(string); ok && (k == "uri") {
				if !strings.HasPrefix(s, prefix) {
					t.Errorf("a uri in a result through the trunk is not namespaced: %q", s)
					continue
				}
				x[k] = strings.TrimPrefix(s, prefix)
				*rewritten++
				continue
			}
			x[k] = unnamespace(t, val, server, rewritten)
		}
		return x
	case []any:
		for i := range x {
			x[i] = unnamespace(t, x[i], server, rewritten)
		}
		return x
	}
	return v
}

// decode turns any value into generic JSON (via its encoding).
func decode(t testing.TB, v any) any {
	t.Helper()
	var out any
	if err := json.Unmarshal([]byte(mustJSON(v)), &out); err != nil {
		t.Fatalf("decoding %s: %v", mustJSON(v), err)
	}
	return out
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// trunkHostTapped is trunkHost with a tap between the host and the trunk:
// the tap's in is what the host sent, its out what the trunk answered.
func trunkHostTapped(t testing.TB, ctx context.Context, cfg string, hc hostConfig, version string) (*host, *tap) {
	t.Helper()
	entry, tp := tapped(t, trunkBin, "serve", "--config", cfg)
	args := entry["args"].([]string)
	return connectHost(t, ctx, exec.Command(entry["command"].(string), args...), hc, version), tp
}

// asWireError finds the JSON-RPC error a go-sdk call returned.
func asWireError(err error) *jsonrpc.Error {
	var w *jsonrpc.Error
	if errors.As(err, &w) {
		return w
	}
	return nil
}

func (r *hostRec) progressCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.progress)
}
