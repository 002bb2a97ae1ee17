package jsonrpc

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
)

// A peer that asks for many large answers and reads none: the connection
// handles at most MaxHandled requests at once, holds at most their
// answers, and stops reading the peer (its writes block) until it reads;
// then every answer arrives, once each, in full.
func TestUnreadAnswersAreBounded(t *testing.T) {
	leakCheck(t)
	const (
		n          = 100
		size       = 256 << 10
		maxHandled = 8
		budget     = 1 << 20
	)
	answer := json.RawMessage(`"` + strings.Repeat("x", size) + `"`)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var c *Conn
	worst := make(chan Unanswered, n)
	c = NewConn(NewLineReader(inR), NewLineWriter(outW), handlerFuncs{req: func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		worst <- c.Unanswered()
		return answer, nil
	}}, &Options{MaxUnreadBytes: budget, MaxHandled: maxHandled})
	stopped := make(chan struct{}, 1)
	c.gate.stopped = func() {
		select {
		case stopped <- struct{}{}:
		default:
		}
	}
	served := make(chan error, 1)
	go func() { served <- c.Serve() }()
	sent := make(chan int, n)
	wrote := make(chan error, 1)
	go func() {
		for i := range n {
			if _, err := fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%d,"method":"big"}`+"\n", i); err != nil {
				wrote <- err
				return
			}
			sent <- i
		}
		wrote <- inW.Close()
	}()

	<-stopped // the read loop waits for the peer to read
	u := c.Unanswered()
	if u.Handled > maxHandled || u.UnreadBytes > maxHandled*(size+64) {
		t.Errorf("while the peer does not read: %+v, want at most %d requests handled and their answers", u, maxHandled)
	}
	if len(sent) > 2*maxHandled+2 { // handled, waiting, and the line read ahead
		t.Errorf("%d requests read from a peer that reads nothing; want at most %d", len(sent), 2*maxHandled+2)
	}

	got := map[string]bool{}
	br := bufio.NewReaderSize(outR, 1<<20)
	for range n {
		line, err := br.ReadBytes('\n')
		if err != nil {
			t.Fatalf("after %d answers: %v", len(got), err)
		}
		var m struct {
			ID     json.RawMessage
			Result json.RawMessage
		}
		if err := json.Unmarshal(line, &m); err != nil || string(m.Result) != string(answer) || got[string(m.ID)] {
			t.Fatalf("answer %d: %.100s (%v)", len(got), line, err)
		}
		got[string(m.ID)] = true
	}
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	_ = outW.Close()
	close(worst)
	for u := range worst {
		if u.Handled > maxHandled {
			t.Fatalf("a handler ran with %d requests handled, want at most %d", u.Handled, maxHandled)
		}
	}
	if u := c.Unanswered(); u.MaxHandled > maxHandled || u.MaxUnreadBytes > maxHandled*(size+64) || u.Handled != 0 || u.UnreadBytes != 0 || u.Waiting != 0 {
		t.Errorf("at the end: %+v", u)
	}
}
