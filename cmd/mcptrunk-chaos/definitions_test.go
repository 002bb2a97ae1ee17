package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"
)

// session is one stdio session with newServer, spoken to line by line.
type session struct {
	t     *testing.T
	in    *io.PipeWriter
	lines chan string
	id    int
	init  json.RawMessage // the initialize result
}

func newSession(t *testing.T) *session {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	out := &lockedWriter{w: outW}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = server.NewStdioServer(newServer(out, false)).Listen(ctx, inR, out)
		outW.Close()
	}()
	lines := make(chan string, 100)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		cancel()
		inW.Close()
		<-done
		for range lines {
		}
	})
	s := &session{t: t, in: inW, lines: lines}
	s.init = s.request("initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"0"}}`)
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return s
}

func (s *session) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatal(err)
	}
}

// next returns the next line the server writes.
func (s *session) next() string {
	s.t.Helper()
	select {
	case line, ok := <-s.lines:
		if !ok {
			s.t.Fatal("the server closed its output")
		}
		return line
	case <-time.After(10 * time.Second):
		s.t.Fatal("no line from the server within 10s")
	}
	return ""
}

// awaitNotification reports whether the server sends a notification with
// method within d (other lines are dropped).
func (s *session) awaitNotification(method string, d time.Duration) bool {
	deadline := time.After(d)
	for {
		select {
		case line, ok := <-s.lines:
			if !ok {
				return false
			}
			var m struct {
				Method string `json:"method"`
			}
			if json.Unmarshal([]byte(line), &m) == nil && m.Method == method {
				return true
			}
		case <-deadline:
			return false
		}
	}
}

// request sends a request and returns its result, collecting the methods
// of the notifications that came before the response in notes.
func (s *session) request(method, params string, notes ...*[]string) json.RawMessage {
	s.t.Helper()
	s.id++
	s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, s.id, method, params))
	for {
		var m struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		line := s.next()
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			s.t.Fatalf("not JSON: %s", line)
		}
		if m.ID == nil {
			for _, n := range notes {
				*n = append(*n, m.Method)
			}
			continue
		}
		if *m.ID != s.id || m.Error != nil {
			s.t.Fatalf("%s: unexpected answer %s", method, line)
		}
		return m.Result
	}
}

// tools returns the description of every tool listed, by name.
func (s *session) tools() map[string]string {
	s.t.Helper()
	var res struct {
		Tools []struct{ Name, Description string }
	}
	if err := json.Unmarshal(s.request("tools/list", `{}`), &res); err != nil {
		s.t.Fatal(err)
	}
	out := map[string]string{}
	for _, tool := range res.Tools {
		out[tool.Name] = tool.Description
	}
	return out
}

func names(m map[string]string) string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

func TestDefaultDefinitions(t *testing.T) {
	s := newSession(t)
	tools := s.tools()
	if d := tools["ping_tool"]; d != "Answers pong." {
		t.Errorf("ping_tool's description is %q", d)
	}
	for _, name := range []string{"hang", "redefine", "crash", "huge"} {
		if _, ok := tools[name]; !ok {
			t.Errorf("no tool %s in %s", name, names(tools))
		}
	}
}

func TestDefinitionsFromTheEnvironment(t *testing.T) {
	t.Setenv("CHAOS_PING_DESCRIPTION", "Answers pong, loudly.")
	t.Setenv("CHAOS_EXTRA_TOOL", "bonus")
	t.Setenv("CHAOS_NO_HANG", "1")
	s := newSession(t)
	tools := s.tools()
	if d := tools["ping_tool"]; d != "Answers pong, loudly." {
		t.Errorf("ping_tool's description is %q", d)
	}
	if d, ok := tools["bonus"]; !ok || d != "An extra tool." {
		t.Errorf("the extra tool: %q, %v (tools %s)", d, ok, names(tools))
	}
	if _, ok := tools["hang"]; ok {
		t.Error("CHAOS_NO_HANG: hang is still offered")
	}
	res := s.request("tools/call", `{"name":"bonus","arguments":{}}`)
	if !strings.Contains(string(res), `"extra"`) {
		t.Errorf("the extra tool answered %s", res)
	}
}

// redefine changes ping_tool and the server says so with list_changed,
// which it declares in initialize.
func TestRedefineAnnouncesListChanged(t *testing.T) {
	s := newSession(t)
	// mcp-go announces list changes to sessions it has marked initialized,
	// which it does while handling notifications/initialized, concurrently
	// with the requests that follow: a redefine that wins that race is not
	// announced. So redefine until an announcement comes, waiting for it
	// each time.
	announced := false
	var notes []string
	for attempt := 0; attempt < 5 && !announced; attempt++ {
		res := s.request("tools/call", `{"name":"redefine","arguments":{"description":"Answers pong, redefined."}}`, &notes)
		if !strings.Contains(string(res), "ping_tool redefined") {
			t.Fatalf("redefine answered %s", res)
		}
		announced = contains(notes, "notifications/tools/list_changed") || s.awaitNotification("notifications/tools/list_changed", time.Second)
	}
	if !announced {
		t.Errorf("no notifications/tools/list_changed after redefine (notifications: %v)", notes)
	}
	tools := s.tools()
	if d := tools["ping_tool"]; d != "Answers pong, redefined." {
		t.Errorf("ping_tool's description after redefine is %q", d)
	}
	res := s.request("tools/call", `{"name":"ping_tool","arguments":{}}`)
	if !strings.Contains(string(res), `"pong"`) {
		t.Errorf("ping_tool after redefine answered %s", res)
	}
}

func TestDeclaresToolsListChanged(t *testing.T) {
	s := newSession(t)
	var init struct {
		Capabilities struct {
			Tools struct {
				ListChanged bool `json:"listChanged"`
			} `json:"tools"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal(s.init, &init); err != nil || !init.Capabilities.Tools.ListChanged {
		t.Errorf("initialize does not declare tools.listChanged: %s", s.init)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
