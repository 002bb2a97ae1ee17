// Package liveline is the live status line of mcptrunk's commands on a
// terminal: a line on stderr redrawn in place (which servers are still
// starting, for how long) that other writes to the same terminal (the log,
// the results) erase first rather than run into; elsewhere (a log, a pipe)
// a plain line now and then.
package liveline

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/mcptrunk/mcptrunk/internal/wording"
)

// Progress shows which servers are still starting, and for how long,
// while a command (check, list, call) waits for them: a server that takes
// its time should not look like a hung command. On a terminal it is one
// line on stderr, redrawn in place and erased when all have started;
// elsewhere (a log, a pipe) it is a plain line now and then, and only when
// starting takes a while, so that a quick start prints nothing.
type Progress struct {
	w       *Screen
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
	// Redraw is how often the live line should be drawn (the tick of Run).
	Redraw             = 100 * time.Millisecond // the live line's
	progressPlainFirst = 3 * time.Second        // the first plain line's delay
	progressPlainEvery = 5 * time.Second        // and the next ones'
)

var spinner = []rune("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")

// New makes the progress of servers whose pending ones
// pending returns, on w; live when w is a terminal.
func New(w *Screen, live bool, pending func() ([]string, int)) *Progress {
	p := &Progress{w: w, live: live, width: 80, pending: pending, now: time.Now,
		nextPlain: progressPlainFirst, stop: make(chan struct{}), done: make(chan struct{})}
	if f, ok := w.W.(*os.File); ok && live {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
			p.width = cols
		}
	}
	p.start = p.now()
	return p
}

// Run shows the progress at each tick until Stop.
func (p *Progress) Run(tick <-chan time.Time) {
	defer close(p.done)
	for {
		select {
		case <-p.stop:
			p.w.Erase()
			return
		case <-tick:
			p.show()
		}
	}
}

// show draws the live line, or prints a plain one when it is time.
func (p *Progress) show() {
	names, total := p.pending()
	elapsed := p.now().Sub(p.start)
	if len(names) == 0 {
		p.w.Erase()
		return
	}
	what := fmt.Sprintf("%s of %d: %s", wording.Count(len(names), "server", "servers"), total, strings.Join(names, ", "))
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
	p.w.Draw(line)
}

// PrintAbove prints line on w (stdout: on a terminal, the same screen)
// without it running into the live line: the line is erased first and
// drawn again at the next tick.
func (p *Progress) PrintAbove(w io.Writer, line string) {
	p.w.Above(w, line)
}

// Stop ends the progress and erases its line; it returns once nothing
// more will be written.
func (p *Progress) Stop() {
	close(p.stop)
	<-p.done
}

// Screen is stderr as the commands write it: shared by the log, the
// messages and the live progress line, so a write erases the line first
// (the next tick draws it again) instead of running into it.
type Screen struct {
	W     io.Writer // where it writes
	mu    sync.Mutex
	drawn bool // a live line is on it
}

func (s *Screen) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.eraseLocked()
	return s.W.Write(b)
}

// Terminal is the writer whose being a terminal counts (isTerminal).
func (s *Screen) Terminal() any { return s.W }

// Draw puts line on the screen in place of the live line.
func (s *Screen) Draw(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(s.W, "\r\x1b[K%s", line)
	s.drawn = true
}

// Erase takes the live line off the screen.
func (s *Screen) Erase() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.eraseLocked()
}

func (s *Screen) eraseLocked() {
	if s.drawn {
		fmt.Fprint(s.W, "\r\x1b[K")
		s.drawn = false
	}
}

// Above writes line and a newline to w, another writer to the same
// terminal, with the live line erased first.
func (s *Screen) Above(w io.Writer, line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.eraseLocked()
	fmt.Fprintln(w, line)
}
