package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/mcptrunk/mcptrunk/upstream"
)

// startProgress shows which servers are still starting, and for how long,
// while a command (check, list, call) waits for them: a server that takes
// its time should not look like a hung command. On a terminal it is one
// line on stderr, redrawn in place and erased when all have started;
// elsewhere (a log, a pipe) it is a plain line now and then, and only when
// starting takes a while, so that a quick start prints nothing.
type startProgress struct {
	w       *screen
	live    bool
	width   int                                // the terminal's columns: a longer line would wrap and not redraw
	pending func() (names []string, total int) // the servers still starting, of how many
	now     func() time.Time
	start   time.Time

	frame     int // the spinner's; used by run's goroutine only
	nextPlain time.Duration

	stop chan struct{}
	done chan struct{}
}

const (
	progressRedraw     = 100 * time.Millisecond // the live line's
	progressPlainFirst = 3 * time.Second        // the first plain line's delay
	progressPlainEvery = 5 * time.Second        // and the next ones'
)

var spinner = []rune("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")

// newStartProgress makes the progress of servers whose pending ones
// pending returns, on w; live when w is a terminal.
func newStartProgress(w *screen, live bool, pending func() ([]string, int)) *startProgress {
	p := &startProgress{w: w, live: live, width: 80, pending: pending, now: time.Now,
		nextPlain: progressPlainFirst, stop: make(chan struct{}), done: make(chan struct{})}
	if f, ok := w.w.(*os.File); ok && live {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
			p.width = cols
		}
	}
	p.start = p.now()
	return p
}

// run shows the progress at each tick until Stop.
func (p *startProgress) run(tick <-chan time.Time) {
	defer close(p.done)
	for {
		select {
		case <-p.stop:
			p.w.erase()
			return
		case <-tick:
			p.show()
		}
	}
}

// show draws the live line, or prints a plain one when it is time.
func (p *startProgress) show() {
	names, total := p.pending()
	elapsed := p.now().Sub(p.start)
	if len(names) == 0 {
		p.w.erase()
		return
	}
	what := fmt.Sprintf("%s of %d: %s", plural(len(names), "server", "servers"), total, strings.Join(names, ", "))
	if !p.live {
		if elapsed >= p.nextPlain {
			fmt.Fprintf(p.w, "mcptrunk: still waiting after %s for %s\n", elapsed.Round(time.Second), what)
			p.nextPlain = elapsed.Truncate(time.Second) + progressPlainEvery
		}
		return
	}
	line := fmt.Sprintf("%c %s waiting for %s", spinner[p.frame%len(spinner)], elapsed.Round(100*time.Millisecond), what)
	p.frame++
	if r := []rune(line); len(r) > p.width-1 {
		line = string(r[:p.width-2]) + "…"
	}
	p.w.draw(line)
}

// printAbove prints line on w (stdout: on a terminal, the same screen)
// without it running into the live line: the line is erased first and
// drawn again at the next tick.
func (p *startProgress) printAbove(w io.Writer, line string) {
	p.w.above(w, line)
}

// Stop ends the progress and erases its line; it returns once nothing
// more will be written.
func (p *startProgress) Stop() {
	close(p.stop)
	<-p.done
}

// startProgress shows the progress of the fleet's servers on env's stderr
// until Stop.
func (e *environment) startProgress(fleet func() *upstream.Fleet) *startProgress {
	p := newStartProgress(e.screen, isTerminal(e.screen), func() ([]string, int) {
		h := fleet()
		if h == nil {
			return nil, 0
		}
		clients := h.Clients()
		var names []string
		for _, c := range clients {
			if s, _ := c.State(); s == upstream.StateStarting || s == upstream.StateRestarting {
				names = append(names, c.Name())
			}
		}
		return names, len(clients)
	})
	ticker := time.NewTicker(progressRedraw)
	go func() {
		defer ticker.Stop()
		p.run(ticker.C)
	}()
	return p
}

// screen is stderr as the commands write it: shared by the log, the
// messages and the live progress line, so a write erases the line first
// (the next tick draws it again) instead of running into it.
type screen struct {
	w     io.Writer
	mu    sync.Mutex
	drawn bool // a live line is on it
}

func (s *screen) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.eraseLocked()
	return s.w.Write(b)
}

// terminal is what isTerminal looks at.
func (s *screen) terminal() any { return s.w }

// draw puts line on the screen in place of the live line.
func (s *screen) draw(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(s.w, "\r\x1b[K%s", line)
	s.drawn = true
}

// erase takes the live line off the screen.
func (s *screen) erase() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.eraseLocked()
}

func (s *screen) eraseLocked() {
	if s.drawn {
		fmt.Fprint(s.w, "\r\x1b[K")
		s.drawn = false
	}
}

// above writes line and a newline to w, another writer to the same
// terminal, with the live line erased first.
func (s *screen) above(w io.Writer, line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.eraseLocked()
	fmt.Fprintln(w, line)
}

// serveHint is what a bare mcptrunk says when a person runs it in a
// terminal (stdin is one) rather than a host: that it is an MCP server
// waiting for a host on stdin, and how to try it instead. Nothing when
// stdin is not a terminal (a host's pipe) or stdin is not served (--http
// without --stdio).
func serveHint(stdinTerminal, servesStdin bool) string {
	if !stdinTerminal || !servesStdin {
		return ""
	}
	return `mcptrunk is an MCP server: it is waiting for a host (Claude Desktop, Claude Code, ...) to speak MCP
on stdin, and a host is what should start it. To try it from a terminal:
  mcptrunk list                   the servers, their state, and the tools, prompts and resources they offer
  mcptrunk call NAME '{...}'      call one tool (NAME as list prints it) and print the result
  mcptrunk --help                 every command
Ctrl-C ends it.
`
}
