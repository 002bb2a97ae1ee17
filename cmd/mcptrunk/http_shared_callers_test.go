package main

//lint:file-ignore SA1019 logging is deprecated by the 2026-07-28 revision (SEP-2577), but the trunk still carries it for 2025-era hosts and servers, and these tests keep that working.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptrunk/mcptrunk/internal/accesstoken/testissuer"
)

// askerSource is a go-sdk stdio server whose one tool, ask, does what a
// team's tool does with its caller's text: reports its arrival (progress,
// when the call carries a token), logs the text and asks the client to
// confirm it (elicitation), the answer becoming the result. A call with
// barrier n waits, before logging, until n such calls have arrived, and
// before answering until n have been answered: calls of several callers
// are then in flight together while they log and ask, ordered by events,
// never by sleeps. Built by buildAsker.
const askerSource = `package main

import (
	"context"
	"fmt"
	"log"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type askArgs struct {
	Text    string ` + "`json:\"text\"`" + `
	Barrier int    ` + "`json:\"barrier\"`" + `
}

var (
	mu             sync.Mutex
	changed        = sync.NewCond(&mu)
	arrived, asked int
)

// await counts one call in *n and waits until barrier calls were counted.
func await(n *int, barrier int) {
	mu.Lock()
	defer mu.Unlock()
	*n++
	changed.Broadcast()
	for *n < barrier {
		changed.Wait()
	}
}

func main() {
	s := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "ask", Description: "logs its text, then asks the client to confirm it"},
		func(ctx context.Context, req *mcp.CallToolRequest, in askArgs) (*mcp.CallToolResult, any, error) {
			if tok := req.Params.GetProgressToken(); tok != nil {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Message: "arrived"})
			}
			await(&arrived, in.Barrier)
			_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "asker", Data: in.Text})
			out := "refused: "
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "confirm: " + in.Text,
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"answer": map[string]any{"type": "string"}}}})
			if err != nil {
				out += err.Error()
			} else {
				out = fmt.Sprintf("answer: %s %v", res.Action, res.Content["answer"])
			}
			await(&asked, in.Barrier)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: out}}}, nil, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Print(err)
	}
}
`

// buildAsker builds askerSource into binDir, once per run (TestMain).
var buildAsker = sync.OnceValues(func() (string, error) { return buildServerSource("asker", askerSource) })

func askerBin(t testing.TB) string {
	t.Helper()
	path, err := buildAsker()
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// askerHost is one caller's go-sdk session, a 2025-era one (sessions,
// log levels, the server's requests as requests): what it was asked and
// heard.
type askerHost struct {
	name    string
	cs      *mcp.ClientSession
	arrived chan struct{} // its call reached the server (progress)

	mu        sync.Mutex
	questions []string
	logs      []string
}

// connect opens h's session at url, with token when not "", at log level
// debug (so that it would hear every line a server logs).
func (h *askerHost) connect(t *testing.T, ctx context.Context, url, token string) {
	t.Helper()
	h.arrived = make(chan struct{}, 4)
	client := mcp.NewClient(&mcp.Implementation{Name: h.name, Version: "0"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			h.mu.Lock()
			h.questions = append(h.questions, req.Params.Message)
			h.mu.Unlock()
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": h.name}}, nil
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			h.mu.Lock()
			h.logs = append(h.logs, fmt.Sprint(req.Params.Data))
			h.mu.Unlock()
		},
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
			h.arrived <- struct{}{}
		},
	})
	transport := &mcp.StreamableClientTransport{Endpoint: url}
	if token != "" {
		transport.HTTPClient = &http.Client{Transport: bearer{token}}
	}
	cs, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("%s: connecting: %v", h.name, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	h.cs = cs
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatalf("%s: setLevel: %v", h.name, err)
	}
}

// ask calls tool (an asker's ask) with text and barrier, its progress
// token marking its arrival, and returns the result's text.
func (h *askerHost) ask(ctx context.Context, tool, text string, barrier int) (string, error) {
	res, err := h.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"text": text, "barrier": barrier}, Meta: mcp.Meta{"progressToken": h.name}})
	if err != nil {
		return "", err
	}
	return toolText(res), nil
}

// saw is what h was asked and heard so far, each joined with "|".
func (h *askerHost) saw() (questions, logs string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return strings.Join(h.questions, "|"), strings.Join(h.logs, "|")
}

// askTogether runs first's call of tool and then second's (the second
// sent once the first arrived), each with barrier: with 2, on one server
// they are in flight together while they log and ask. It returns their
// results.
func askTogether(t *testing.T, ctx context.Context, tool string, barrier int, first, second *askerHost) (string, string) {
	t.Helper()
	var firstOut string
	var firstErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		firstOut, firstErr = first.ask(ctx, tool, first.name+"-private-data", barrier)
	}()
	select {
	case <-first.arrived:
	case <-done:
		// With barrier 1 (an instance of its own) the call need not wait
		// for the other and may be answered before its client has handled
		// the progress that said it arrived; with 2 it cannot end first.
		if firstErr != nil || barrier > 1 {
			t.Fatalf("%s's call ended before it reached the server: %q %v", first.name, firstOut, firstErr)
		}
		select {
		case <-first.arrived:
		case <-ctx.Done():
			t.Fatalf("%s's call was answered %q, and never said it reached the server", first.name, firstOut)
		}
	case <-ctx.Done():
		t.Fatalf("%s's call never reached the server", first.name)
	}
	secondOut, secondErr := second.ask(ctx, tool, second.name+"-private-data", barrier)
	<-done
	if firstErr != nil || secondErr != nil {
		t.Fatalf("the calls: %v / %v", firstErr, secondErr)
	}
	return firstOut, secondOut
}

// Two callers of one shared 2025-era stdio server, each call logging and
// asking with its caller's text while both are in flight: neither caller
// is asked the other's question or hears the other's log line, signed in
// or anonymous, whichever calls first. The trunk cannot tell whose they
// are, so each question is refused naming "scope": "caller", and the log
// lines go to nobody. A caller alone in flight is asked its own question
// and the other hears nothing. With "scope": "caller" each caller has an
// instance of its own and is asked its own question while both are in
// flight.
func TestHTTPSharedServerCallers(t *testing.T) {
	t.Parallel()
	asker := askerBin(t)
	const resource = "http://trunk.test/mcp"
	iss := testissuer.New(t)
	for _, tc := range []struct {
		name      string
		signedIn  bool
		bobFirst  bool
		perCaller bool
	}{
		{"signed in, alice first", true, false, false},
		{"signed in, bob first", true, true, false},
		{"anonymous, alice first", false, false, false},
		{"anonymous, bob first", false, true, false},
		{"signed in, scope caller", true, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t, 2*time.Minute)
			entry := pin2025(server{"command": asker})
			if tc.perCaller {
				entry["scope"] = "caller"
			}
			var opts map[string]any
			if tc.signedIn {
				opts = map[string]any{"http": map[string]any{"auth": map[string]any{"issuer": iss.URL, "resource": resource}}}
			}
			trunk := startHTTPTrunk(t, ctx, writeConfig(t, map[string]server{"notes": entry}, opts))
			alice, bob := &askerHost{name: "alice"}, &askerHost{name: "bob"}
			for _, h := range []*askerHost{alice, bob} {
				token := ""
				if tc.signedIn {
					token = iss.Token(t, h.name, resource, nil)
				}
				h.connect(t, ctx, trunk.url, token)
			}
			first, second := alice, bob
			if tc.bobFirst {
				first, second = bob, alice
			}
			// Instances of their own count their own calls.
			barrier := 2
			if tc.perCaller {
				barrier = 1
			}
			firstOut, secondOut := askTogether(t, ctx, "mcp__notes__ask", barrier, first, second)
			for _, c := range []struct {
				h   *askerHost
				out string
			}{{first, firstOut}, {second, secondOut}} {
				questions, logs := c.h.saw()
				if tc.perCaller {
					if want := "answer: accept " + c.h.name; c.out != want {
						t.Errorf("%s's call, on an instance of its own: %q, want %q", c.h.name, c.out, want)
					}
					// Its own log line and question, before its result.
					if want := "confirm: " + c.h.name + "-private-data"; questions != want {
						t.Errorf("%s was asked %q, want %q", c.h.name, questions, want)
					}
					if !waitFor(ctx, 10*time.Second, func() bool { _, logs = c.h.saw(); return logs != "" }) || logs != c.h.name+"-private-data" {
						t.Errorf("%s heard %q, want its own line alone", c.h.name, logs)
					}
					continue
				}
				if questions != "" || logs != "" {
					t.Errorf("%s, with two callers in flight, was asked %q and heard %q: want nothing", c.h.name, questions, logs)
				}
				if !strings.HasPrefix(c.out, "refused: ") || !strings.Contains(c.out, `"scope": "caller"`) {
					t.Errorf("%s's call: %q, want the server's question refused naming \"scope\": \"caller\"", c.h.name, c.out)
				}
			}
			if tc.perCaller {
				checkNoRace(t, trunk.stderr)
				return
			}

			// One caller in flight: it is asked and hears its line; the
			// other, nothing.
			out, err := first.ask(ctx, "mcp__notes__ask", first.name+"-alone", 0)
			if want := "answer: accept " + first.name; err != nil || out != want {
				t.Fatalf("%s alone: %q %v, want %q", first.name, out, err, want)
			}
			var questions, logs string
			if !waitFor(ctx, 10*time.Second, func() bool { questions, logs = first.saw(); return logs != "" }) ||
				questions != "confirm: "+first.name+"-alone" || logs != first.name+"-alone" {
				t.Errorf("%s alone was asked %q and heard %q, want its own question and line", first.name, questions, logs)
			}
			if err := second.cs.Ping(ctx, nil); err != nil {
				t.Fatal(err)
			}
			if questions, logs := second.saw(); questions != "" || logs != "" {
				t.Errorf("%s, with no call in flight, was asked %q and heard %q", second.name, questions, logs)
			}
			checkNoRace(t, trunk.stderr)
		})
	}
}

// A signed-in caller whose view hides a server hears none of its log
// lines: alice (admin) calls notes, which logs; bob (support, who sees
// weather alone), at level debug, hears nothing of it.
func TestHTTPHiddenServerLogs(t *testing.T) {
	t.Parallel()
	asker := askerBin(t)
	const resource = "http://trunk.test/mcp"
	iss := testissuer.New(t)
	ctx := testCtx(t, 2*time.Minute)
	trunk := startHTTPTrunk(t, ctx, writeConfig(t, map[string]server{
		"notes":   pin2025(server{"command": asker}),
		"weather": pin2025(server{"command": asker}),
	}, map[string]any{
		"http": map[string]any{"auth": map[string]any{"issuer": iss.URL, "resource": resource}},
		"policy": map[string]any{"rules": []map[string]string{
			{"allow": `"admin" in claims.?groups.orValue([])`},
			{"allow": `"support" in claims.?groups.orValue([]) && server == "weather"`},
		}},
	}))
	alice, bob := &askerHost{name: "alice"}, &askerHost{name: "bob"}
	alice.connect(t, ctx, trunk.url, iss.Token(t, "alice", resource, map[string]any{"groups": []string{"admin"}}))
	bob.connect(t, ctx, trunk.url, iss.Token(t, "bob", resource, map[string]any{"groups": []string{"support"}}))
	if out, err := alice.ask(ctx, "mcp__notes__ask", "alice-notes", 0); err != nil || out != "answer: accept alice" {
		t.Fatalf("alice's call: %q %v", out, err)
	}
	if !waitFor(ctx, 10*time.Second, func() bool { _, logs := alice.saw(); return logs != "" }) {
		t.Fatal("alice never heard her own call's log line")
	}
	if err := bob.cs.Ping(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if questions, logs := bob.saw(); questions != "" || logs != "" {
		t.Errorf("bob, who cannot see notes, was asked %q and heard %q", questions, logs)
	}
	checkNoRace(t, trunk.stderr)
}

// What a server sends during a call of a 2025-era HTTP session goes on
// that call's POST stream, though the session's GET stream is open: the
// call's log line and the server's question (answered with a POST of its
// own) come before the call's answer on its stream, without the trunk's
// mark, and the GET stream's first event is the list change a later call
// causes.
func TestHTTPRelatedOnCallStream(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 2*time.Minute)
	trunk := startHTTPTrunk(t, ctx, writeConfig(t, map[string]server{
		"notes":       pin2025(server{"command": askerBin(t)}),
		"conformance": pin2025(server{"command": conformanceBin(t)}),
	}, nil))
	session := rawSessionWith(t, ctx, trunk.url, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"raw","version":"0"}}}`)
	post := func(body string) {
		t.Helper()
		if r, err := postMCP(ctx, trunk.url, body, map[string]string{"Mcp-Session-Id": session}); err != nil || r.status >= 300 {
			t.Fatalf("POST %s: %v %d %q", body, err, r.status, r.messages)
		}
	}
	post(`{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"debug"}}`)
	post(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`) // a list served is a list whose changes it is told

	// streamOf reads req's event stream on a goroutine of its own: each
	// event's data, or "error: ..." when there is no stream.
	streamOf := func(req *http.Request) <-chan string {
		out := make(chan string, 16)
		go func() {
			defer close(out)
			sse, err := startSSE(req)
			if err != nil {
				out <- "error: " + err.Error()
				return
			}
			defer sse.close()
			for ev, ok := sse.next(); ok; ev, ok = sse.next() {
				out <- ev.data
			}
		}()
		return out
	}
	get := streamOf(sessionRequest(t, ctx, http.MethodGet, trunk.url, session, "", nil))
	onCall := streamOf(sessionRequest(t, ctx, http.MethodPost, trunk.url, session,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"mcp__notes__ask","arguments":{"text":"mine","barrier":0}}}`, nil))

	// answer answers a question of the server's, wherever it came.
	answer := func(msg string) {
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal([]byte(msg), &req) != nil || req.ID == nil {
			t.Fatalf("a request without an id: %s", msg)
		}
		post(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"action":"accept","content":{"answer":"raw"}}}`)
	}
	var seen []string
	for done := false; !done; {
		select {
		case msg, ok := <-onCall:
			if !ok {
				t.Fatalf("the call's stream ended before its answer, after %q", seen)
			}
			switch {
			case strings.Contains(msg, `"elicitation/create"`):
				seen = append(seen, "question")
				answer(msg)
			case strings.Contains(msg, `"notifications/message"`):
				seen = append(seen, "log")
			case strings.Contains(msg, `"id":7`):
				seen = append(seen, "answer")
				if !strings.Contains(msg, "answer: accept raw") {
					t.Errorf("the call's answer: %s", msg)
				}
				done = true
			}
			if strings.Contains(msg, "relatedRequest") || strings.HasPrefix(msg, "error: ") {
				t.Errorf("the call's stream: %s", msg)
			}
		case msg, ok := <-get:
			if !ok {
				t.Fatal("the GET stream ended")
			}
			t.Errorf("the GET stream got %s during the call, want it on the call's stream", msg)
			if strings.Contains(msg, `"elicitation/create"`) {
				answer(msg)
			}
		case <-ctx.Done():
			t.Fatalf("the call's stream so far: %q", seen)
		}
	}
	// The log line is queued for the host and the question written at
	// once: either may come first, both before the answer.
	if got := strings.Join(seen, " "); got != "log question answer" && got != "question log answer" {
		t.Errorf("the call's stream: %s, want its log line and the question, then the answer", got)
	}
	post(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"mcp__conformance__test_trigger_tool_change","arguments":{}}}`)
	select {
	case msg, ok := <-get:
		if !ok || !strings.Contains(msg, `"notifications/tools/list_changed"`) {
			t.Errorf("the GET stream's first event: %s, want the list change", msg)
		}
	case <-ctx.Done():
		t.Fatal("no list change on the GET stream")
	}
}
