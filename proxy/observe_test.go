package proxy

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/proxy/observe"
)

// recordingObserver keeps what it is told.
type recordingObserver struct {
	mu   sync.Mutex
	seen []string
}

type ctxMark struct{}

func (o *recordingObserver) Begin(ctx context.Context, r observe.Request) (context.Context, func(observe.Outcome)) {
	return context.WithValue(ctx, ctxMark{}, r.Method), func(out observe.Outcome) {
		o.mu.Lock()
		defer o.mu.Unlock()
		errText := ""
		switch {
		case out.Forwarded:
			errText = "forwarded error"
		case out.Err != nil:
			errText = "error"
		}
		o.seen = append(o.seen, strings.Join([]string{string(r.ID), string(r.Transport), r.Session, r.Method, r.Server, r.Item, r.Revision, r.Client, errText}, "|"))
	}
}

// TestObserversSeeEveryHostRequest: each host request, at either revision,
// reaches every observer once with its id, what it names and how it ended
// (an error of the trunk's own is not forwarded; the stdio host has no
// session id).
func TestObserversSeeEveryHostRequest(t *testing.T) {
	cfg, err := config.Parse(strings.NewReader(`{"mcpServers":{}}`), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	a, b := &recordingObserver{}, &recordingObserver{}
	tr := New(cfg, &Options{Observers: []observe.Observer{a, b}})
	h := servePipes(t, tr)
	h.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"old-host","version":"1"}}}`)
	h.next("initialize")
	h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mcp__nowhere__x","arguments":{}}}`)
	h.next("the call's error")
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"new-host","version":"2"}}`
	h.send(`{"jsonrpc":"2.0","id":"three","method":"resources/read","params":{"uri":"mcptrunk://trunk/status",` + meta + `}}`)
	h.next("the read")
	want := []string{
		"1|stdio||initialize|||||",
		"2|stdio||tools/call|nowhere|mcp__nowhere__x|2025-11-25|old-host|error",
		`"three"|stdio||resources/read|trunk|mcptrunk://trunk/status|2026-07-28|new-host|`,
	}
	for _, o := range []*recordingObserver{a, b} {
		o.mu.Lock()
		got := strings.Join(o.seen, "\n")
		o.mu.Unlock()
		if got != strings.Join(want, "\n") {
			t.Errorf("observed:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
		}
	}
}

// TestObserversSeeTheSession: a request of a session of the HTTP
// downstream names the session and its transport.
func TestObserversSeeTheSession(t *testing.T) {
	cfg, err := config.Parse(strings.NewReader(`{"mcpServers":{}}`), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	o := &recordingObserver{}
	h := attachPipes(t, New(cfg, &Options{Observers: []observe.Observer{o}}), &SessionOptions{ID: "c0ffee"})
	h.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	h.next("the ping")
	o.mu.Lock()
	defer o.mu.Unlock()
	if want := "1|http|c0ffee|ping|||||"; len(o.seen) != 1 || o.seen[0] != want {
		t.Errorf("observed %q, want [%s]", o.seen, want)
	}
}
