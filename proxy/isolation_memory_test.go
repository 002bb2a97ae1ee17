package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/internal/testkit"
	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// askServer makes 2025-11-25 servers with one tool, ask, that logs its
// argument text and then asks the client to confirm it (elicitation), the
// answer (or the refusal) being the call's result: what a team's host
// must hear only from its own calls. Each call reports its text on arrived
// and goes on when its gate (by text) is closed; one with a gate then
// reports on asked once its question is answered, and returns when its
// hold is closed. A test orders calls by these events, not by time. Every
// dial is an instance of its own, as a server with instances per caller
// has.
type askServer struct {
	arrived, asked chan string
	gates, holds   map[string]chan struct{} // text -> closed when that call may go on; absent: at once
	dials          chan struct{}            // one per instance started
}

func newAskServer() *askServer {
	return &askServer{arrived: make(chan string, 8), asked: make(chan string, 8), gates: map[string]chan struct{}{}, holds: map[string]chan struct{}{}, dials: make(chan struct{}, 8)}
}

func (a *askServer) dial(_ config.Spec, h jsonrpc.Handler) (upstream.Transport, error) {
	s := &memserver.Server{Tools: []json.RawMessage{memserver.Tool("ask", "asks its text back")}, Capabilities: json.RawMessage(`{"tools":{},"logging":{}}`)}
	s.Handle = func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		switch method {
		case "logging/setLevel":
			return json.RawMessage(`{}`), nil
		case "tools/call":
		default:
			return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "no %s", method)
		}
		start, end, _, _ := rawjson.FieldSpan(params, "arguments")
		text, _ := rawjson.StringField(params[start:end], "text")
		a.arrived <- text
		if gate, ok := a.gates[text]; ok {
			<-gate
		}
		conn := s.Conn()
		_ = conn.Notify("notifications/message", json.RawMessage(`{"level":"info","logger":"ask","data":`+quote(text)+`}`))
		res, err := conn.Call(ctx, "elicitation/create", json.RawMessage(`{"message":`+quote("confirm: "+text)+`,"requestedSchema":{"type":"object","properties":{}}}`))
		out := "answer: " + string(res)
		if err != nil {
			out = "refused: " + err.Error()
		}
		if hold, ok := a.holds[text]; ok {
			a.asked <- text
			<-hold
		}
		return json.RawMessage(`{"content":[{"type":"text","text":` + quote(out) + `}]}`), nil
	}
	a.dials <- struct{}{}
	return s.Dial(h), nil
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// await receives from ch, failing the test when nothing comes in 30 s (a
// call that never got there: the trunk sent its question elsewhere).
func await[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatalf("waiting for %s", what)
		var zero T
		return zero
	}
}

// askTrunk is a shared trunk (as serve --http runs it) whose server
// "notes" is an askServer, with the extra fields of its entry, and
// trunkOpts as the config's "trunk" object.
// The trunk's log goes to log.
func askTrunk(t *testing.T, a *askServer, entry, trunkOpts map[string]any) (tr *Trunk, log *testkit.Buffer) {
	t.Helper()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	log = &testkit.Buffer{}
	tr = New(memConfig(t, memserver.Set{"notes": nil}, map[string]map[string]any{"notes": entry}, trunkOpts),
		&Options{Dial: a.dial, Logger: slog.New(slog.NewTextHandler(io.Writer(log), nil))})
	tr.Share()
	// After the sessions' own cleanups (registered later, run first).
	t.Cleanup(func() { _ = tr.Close(context.Background()) })
	return tr, log
}

// driven is what one host saw of one call: the call's text result, and
// the server's requests and log lines it was sent meanwhile.
type driven struct {
	text      string
	questions []string // elicitation messages
	logs      []string // log lines' data
}

// drive reads h's lines until the answer to request id, answering each
// elicitation with an acceptance naming who; it runs on a goroutine of its
// own, so it reports through t.Errorf only.
func drive(t *testing.T, h *memHost, id, who string) <-chan driven {
	out := make(chan driven, 1)
	go func() {
		var d driven
		defer func() { out <- d }()
		for {
			var line string
			select {
			case l, ok := <-h.lines:
				if !ok {
					t.Errorf("%s: the trunk closed the output before answering %s", who, id)
					return
				}
				line = l
			case <-time.After(30 * time.Second):
				t.Errorf("%s: no answer to %s in 30 s", who, id)
				return
			}
			var m struct {
				ID     json.RawMessage
				Method string
				Params json.RawMessage
				Result json.RawMessage
				Error  json.RawMessage
			}
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Errorf("%s: the trunk wrote %q", who, line)
				return
			}
			switch {
			case m.Method == "elicitation/create":
				msg, _ := rawjson.StringField(m.Params, "message")
				d.questions = append(d.questions, msg)
				h.send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"action":"accept","content":{"by":` + quote(who) + `}}}`)
			case m.Method == "notifications/message":
				data, _ := rawjson.StringField(m.Params, "data")
				d.logs = append(d.logs, data)
			case m.Method == "" && string(m.ID) == id:
				var res struct{ Content []struct{ Text string } }
				if json.Unmarshal(m.Result, &res) != nil || len(res.Content) != 1 {
					t.Errorf("%s: answer %s %s", who, m.Result, m.Error)
					return
				}
				d.text = res.Content[0].Text
				return
			}
		}
	}()
	return out
}

// askCall sends h a call of the ask tool with text, as request id.
func askCall(h *memHost, id, text string) {
	h.send(`{"jsonrpc":"2.0","id":` + quote(id) + `,"method":"tools/call","params":{"name":"mcp__notes__ask","arguments":{"text":` + quote(text) + `}}}`)
}

// overlap runs first's call and then second's on the server at once (the
// first waits until the second has arrived), and returns what each saw.
func overlap(t *testing.T, a *askServer, first, second *memHost, firstName, secondName string) (driven, driven) {
	t.Helper()
	one, two := firstName+"-private-data", secondName+"-private-data"
	for _, text := range []string{one, two} {
		a.gates[text], a.holds[text] = make(chan struct{}), make(chan struct{})
	}
	askCall(first, "c-"+firstName, one)
	if got := await(t, a.arrived, one+" to arrive"); got != one {
		t.Fatalf("the server got %q first, want %q", got, one)
	}
	firstSaw := drive(t, first, quote("c-"+firstName), firstName)
	askCall(second, "c-"+secondName, two)
	if got := await(t, a.arrived, two+" to arrive"); got != two {
		t.Fatalf("the server got %q second, want %q", got, two)
	}
	secondSaw := drive(t, second, quote("c-"+secondName), secondName)
	// Both calls stay in flight until both questions were answered.
	close(a.gates[one])
	close(a.gates[two])
	await(t, a.asked, "the first question answered")
	await(t, a.asked, "the second question answered")
	close(a.holds[one])
	close(a.holds[two])
	return <-firstSaw, <-secondSaw
}

// Two callers on one shared 2025 server, calls in flight at once, in both
// orders: neither hears the other's log line nor is asked the other's
// question; each question gets an error naming the reason and the
// "scope" setting, and the log lines are counted and go to nobody. One
// caller alone in flight gets its own question and log line, and the
// other nothing.
func TestSharedServerCallersIsolated(t *testing.T) {
	for _, order := range []string{"alice first", "bob first"} {
		t.Run(order, func(t *testing.T) {
			a := newAskServer()
			tr, log := askTrunk(t, a, nil, nil)
			attach := func(subject string) *memHost {
				h := &memHost{pipeHost: attachPipes(t, tr, &SessionOptions{ID: subject + "-session", Subject: subject})}
				h.initialize(`{"elicitation":{}}`)
				h.call("logging/setLevel", `{"level":"debug"}`)
				return h
			}
			alice, bob := attach("alice"), attach("bob")
			first, second, firstName, secondName := alice, bob, "alice", "bob"
			if order == "bob first" {
				first, second, firstName, secondName = bob, alice, "bob", "alice"
			}
			one, two := overlap(t, a, first, second, firstName, secondName)
			for _, c := range []struct {
				who string
				saw driven
			}{{firstName, one}, {secondName, two}} {
				if len(c.saw.questions) != 0 || len(c.saw.logs) != 0 {
					t.Errorf("%s, with two callers in flight, was asked %q and heard %q: want nothing (the trunk cannot tell whose)", c.who, c.saw.questions, c.saw.logs)
				}
				if !strings.HasPrefix(c.saw.text, "refused: ") || !strings.Contains(c.saw.text, `"scope": "caller"`) || !strings.Contains(c.saw.text, "2 sessions have calls in flight") {
					t.Errorf("%s's call: %q, want the server's question refused naming the reason and the scope setting", c.who, c.saw.text)
				}
			}
			if n := tr.unowned.Load(); n != 2 {
				t.Errorf("unattributed notifications: %d, want the 2 log lines", n)
			}
			if n := strings.Count(log.String(), "goes to nobody"); n != 1 || !strings.Contains(log.String(), "several sessions have calls in flight") {
				t.Errorf("the trunk logged %d lines about notifications that went to nobody, want 1 naming the reason:\n%s", n, log)
			}

			// One caller in flight: it is asked, and the other hears nothing.
			askCall(first, "alone", firstName+"-again")
			await(t, a.arrived, "the call alone to arrive")
			alone := <-drive(t, first, `"alone"`, firstName)
			if alone.text != `answer: {"action":"accept","content":{"by":"`+firstName+`"}}` ||
				strings.Join(alone.questions, "|") != "confirm: "+firstName+"-again" || strings.Join(alone.logs, "|") != firstName+"-again" {
				t.Errorf("%s alone in flight: %+v, want its own question and log line, and its answer", firstName, alone)
			}
			if res, _ := second.call("ping", `{}`); res == nil {
				t.Fatal("ping")
			}
			if len(second.seen) != 0 {
				t.Errorf("%s, with no call in flight, was sent %v", secondName, second.seenMethods())
			}
		})
	}
}

// A shared server's request with no call in flight (unsolicited) reaches
// nobody, though one session is attached, and is refused naming the
// setting; with sharing off (the stdio host) it still reaches the host.
func TestSharedServerUnsolicited(t *testing.T) {
	a := newAskServer()
	tr, _ := askTrunk(t, a, nil, nil)
	bob := &memHost{pipeHost: attachPipes(t, tr, &SessionOptions{ID: "bob-session", Subject: "bob"})}
	bob.initialize(`{"elicitation":{}}`)
	res, err := tr.forwardRequest(context.Background(), "notes", "elicitation/create", json.RawMessage(`{"message":"unsolicited"}`))
	if err == nil || !strings.Contains(err.Error(), "no session has a call in flight") || !strings.Contains(err.Error(), `"scope": "caller"`) {
		t.Errorf("an unsolicited request with one session attached: %s %v, want it refused naming the scope setting", res, err)
	}
	if r, _ := bob.call("ping", `{}`); r == nil || len(bob.seen) != 0 {
		t.Errorf("bob was sent %v", bob.seenMethods())
	}

	stdio, host := memTrunk(t, memserver.Set{"notes": &memserver.Server{}}, nil, nil, nil)
	host.initialize(`{"elicitation":{}}`)
	done := make(chan error, 1)
	go func() {
		_, err := stdio.forwardRequest(context.Background(), "notes", "elicitation/create", json.RawMessage(`{"message":"unsolicited"}`))
		done <- err
	}()
	var m map[string]json.RawMessage
	if line := host.next("the server's request"); json.Unmarshal([]byte(line), &m) != nil || !strings.Contains(line, "unsolicited") {
		t.Fatalf("the stdio host got %q, want the server's request", line)
	}
	host.answer = func(string, json.RawMessage) string { return `{"action":"decline"}` }
	host.reply(m)
	if err := <-done; err != nil {
		t.Errorf("the stdio host's answer: %v", err)
	}
}

// Stateless (2026-07-28) requests of two callers, in flight at once on
// one shared 2025 server: the server's question reaches neither caller's
// result (it would come back as the other's input_required), it is
// refused naming the setting, and neither hears the other's log line.
func TestStatelessCallersOnSharedServer(t *testing.T) {
	a := newAskServer()
	tr, _ := askTrunk(t, a, nil, nil)
	caller := func(subject string) *memHost {
		return &memHost{pipeHost: runPipes(t, func(ctx context.Context, in io.Reader, out io.Writer) error {
			return tr.Attach(jsonrpc.NewLineReader(in), jsonrpc.NewLineWriter(out), &SessionOptions{PerRequest: true, Subject: subject}).Run(ctx)
		})}
	}
	alice, bob := caller("alice"), caller("bob")
	// The first request starts the servers; the trunk's own tools list.
	if res, errObj := alice.call("tools/list", `{`+statelessMeta(`{}`)+`}`); res == nil {
		t.Fatalf("tools/list: %s", errObj)
	}
	ask := func(h *memHost, id, text string) {
		h.send(`{"jsonrpc":"2.0","id":` + quote(id) + `,"method":"tools/call","params":{"name":"mcp__notes__ask","arguments":{"text":` + quote(text) + `},` +
			statelessMeta(`{"elicitation":{}}`) + `,"logLevel":"debug"}}`)
	}
	for _, text := range []string{"alice-private-data", "bob-private-data"} {
		a.gates[text], a.holds[text] = make(chan struct{}), make(chan struct{})
	}
	ask(alice, "c-alice", "alice-private-data")
	await(t, a.arrived, "alice's call to arrive")
	aliceSaw := drive(t, alice, `"c-alice"`, "alice")
	ask(bob, "c-bob", "bob-private-data")
	await(t, a.arrived, "bob's call to arrive")
	bobSaw := drive(t, bob, `"c-bob"`, "bob")
	close(a.gates["alice-private-data"])
	close(a.gates["bob-private-data"])
	await(t, a.asked, "the first question answered")
	await(t, a.asked, "the second question answered")
	close(a.holds["alice-private-data"])
	close(a.holds["bob-private-data"])
	for _, c := range []struct {
		who string
		saw driven
	}{{"alice", <-aliceSaw}, {"bob", <-bobSaw}} {
		if len(c.saw.questions) != 0 || len(c.saw.logs) != 0 || !strings.HasPrefix(c.saw.text, "refused: ") || !strings.Contains(c.saw.text, `"scope": "caller"`) {
			t.Errorf("%s: %+v, want the server's question refused naming the setting, and no log line", c.who, c.saw)
		}
	}
}

// With "scope": "caller" each caller has an instance of its own (a
// signed-in caller's by subject, an anonymous session its own): two
// callers in flight at once are each asked their own question and hear
// their own log line.
func TestPerCallerScope(t *testing.T) {
	for _, signedIn := range []bool{true, false} {
		t.Run(fmt.Sprintf("signed in %v", signedIn), func(t *testing.T) {
			a := newAskServer()
			tr, _ := askTrunk(t, a, map[string]any{"scope": "caller"}, nil)
			attach := func(name string) *memHost {
				opts := &SessionOptions{ID: name + "-session"}
				if signedIn {
					opts.Subject = name
				}
				h := &memHost{pipeHost: attachPipes(t, tr, opts)}
				h.initialize(`{"elicitation":{}}`)
				h.call("logging/setLevel", `{"level":"debug"}`)
				return h
			}
			alice, bob := attach("alice"), attach("bob")
			await(t, a.dials, "the shared instance, which lists")
			aliceSaw, bobSaw := overlap(t, a, alice, bob, "alice", "bob")
			for _, c := range []struct {
				who string
				saw driven
			}{{"alice", aliceSaw}, {"bob", bobSaw}} {
				want := driven{text: `answer: {"action":"accept","content":{"by":"` + c.who + `"}}`, questions: []string{"confirm: " + c.who + "-private-data"}, logs: []string{c.who + "-private-data"}}
				if fmt.Sprint(c.saw) != fmt.Sprint(want) {
					t.Errorf("%s: %+v, want %+v", c.who, c.saw, want)
				}
			}
			if n := len(a.dials); n != 2 {
				t.Errorf("%d instances started besides the shared one, want one per caller (2)", n)
			}
		})
	}
}

// A server's log lines reach only sessions whose view shows the server:
// support's view (weather only) never admits notes' lines, whatever its
// level; the stdio host on the weather profile, with sharing off, hears
// weather and not notes.
func TestLogsFollowTheView(t *testing.T) {
	tr, _ := memTrunk(t, teamServers(), nil, teamTrunk, nil)
	tr.Share()
	for _, who := range []struct {
		subject string
		groups  []any
	}{{"ada", []any{"admin"}}, {"sam", []any{"support"}}} {
		h := &memHost{pipeHost: attachPipes(t, tr, &SessionOptions{ID: who.subject, Subject: who.subject, Claims: map[string]any{"sub": who.subject, "groups": who.groups}})}
		h.initialize(`{}`)
	}
	sessions := map[string]*Session{}
	for _, s := range tr.hosts.all() {
		sessions[s.subject] = s
	}
	for _, c := range []struct {
		subject, server string
		want            bool
	}{{"ada", "notes", true}, {"ada", "weather", true}, {"sam", "notes", false}, {"sam", "weather", true}} {
		if got := sessions[c.subject].wantsLog(c.server, "error"); got != c.want {
			t.Errorf("%s: a log line of %s wanted %v, want %v", c.subject, c.server, got, c.want)
		}
	}

	stdio, host := memTrunk(t, teamServers(), nil, map[string]any{"profiles": teamTrunk["profiles"]}, &Options{Profile: "weather"})
	host.initialize(`{}`)
	for _, server := range []string{"notes", "weather"} {
		stdio.forwardNotification(server, "notifications/message", json.RawMessage(`{"level":"info","data":"from `+server+`"}`))
	}
	host.call("ping", `{}`)
	var heard []string
	for _, m := range host.seen {
		heard = append(heard, string(m["params"]))
	}
	if len(heard) != 1 || !strings.Contains(heard[0], `"from weather"`) {
		t.Errorf("the stdio host on the weather profile heard %q, want weather's line alone", heard)
	}
}
