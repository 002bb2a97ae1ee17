package liveline

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// progressRig drives a Progress by hand: a fake clock, each tick's
// redraw run by the test, and the servers pending set by the test.
type progressRig struct {
	p    *Progress
	out  *bytes.Buffer
	mu   sync.Mutex
	now  time.Time
	left []string
}

func newProgressRig(live bool, pending ...string) *progressRig {
	r := &progressRig{out: &bytes.Buffer{}, now: time.Unix(1000, 0), left: pending}
	r.p = New(&Screen{W: r.out}, live, func() ([]string, int) {
		r.mu.Lock()
		defer r.mu.Unlock()
		return append([]string(nil), r.left...), 3
	})
	r.p.now = func() time.Time { r.mu.Lock(); defer r.mu.Unlock(); return r.now }
	r.p.start = r.now
	go r.p.Run(nil) // no ticks: at draws; run is there for Stop
	return r
}

// at moves the clock to d after the start, sets the pending servers, and
// does what a tick does.
func (r *progressRig) at(d time.Duration, pending ...string) {
	r.mu.Lock()
	r.now, r.left = time.Unix(1000, 0).Add(d), pending
	r.mu.Unlock()
	r.p.show()
}

// output stops the progress and returns all it wrote.
func (r *progressRig) output() string {
	r.p.Stop()
	return r.out.String()
}

// TestProgressLive: on a terminal, one line redrawn in place names the
// pending servers and how long they have been starting, and is erased
// when they have all started, and before any line printed above it.
func TestProgressLive(t *testing.T) {
	r := newProgressRig(true, "gh", "slow")
	r.at(100*time.Millisecond, "gh", "slow")
	r.at(1500*time.Millisecond, "slow")
	r.p.PrintAbove(r.out, "   1.5s  gh                   ready")
	r.p.w.Write([]byte("a log line\n"))
	r.at(2 * time.Second)
	out := r.output()
	for _, want := range []string{
		"\r\x1b[K⠋ 100ms waiting for 2 servers of 3: gh, slow",
		"\r\x1b[K⠙ 1.5s waiting for 1 server of 3: slow\r\x1b[K   1.5s  gh                   ready\na log line\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the live progress does not show %q:\n%q", want, out)
		}
	}
	if !strings.HasSuffix(out, "a log line\n") {
		t.Errorf("the line was drawn again with nothing pending, or not erased:\n%q", out)
	}
	if strings.Count(out, "\n") != 2 {
		t.Errorf("the live progress wrote lines of its own:\n%q", out)
	}

	r = newProgressRig(true, strings.Repeat("server", 30))
	r.p.width = 40
	r.at(time.Second, strings.Repeat("server", 30))
	out = r.output()
	if line := strings.TrimPrefix(strings.Split(out, "\r\x1b[K")[1], "\r\x1b[K"); len([]rune(line)) != 39 {
		t.Errorf("a line wider than the terminal was not cut to fit (%d columns): %q", len([]rune(line)), line)
	}
	if !strings.HasSuffix(out, "\r\x1b[K") {
		t.Errorf("the line is not erased at Stop: %q", out)
	}
}

// TestProgressPlain: elsewhere, nothing while the start is quick, then a
// plain line now and then naming the pending servers.
func TestProgressPlain(t *testing.T) {
	r := newProgressRig(false, "gh", "slow")
	r.at(time.Second, "gh", "slow")
	r.at(2*time.Second, "slow")
	if out := r.out.String(); out != "" {
		t.Errorf("a quick start printed %q", out)
	}
	r.at(progressPlainFirst, "slow")
	r.at(progressPlainFirst+time.Second, "slow")
	r.at(progressPlainFirst+progressPlainEvery, "slow")
	r.at(progressPlainFirst + progressPlainEvery + time.Second)
	want := "mcptrunk: still waiting after 3s for 1 server of 3: slow\n" +
		"mcptrunk: still waiting after 8s for 1 server of 3: slow\n"
	if out := r.output(); out != want {
		t.Errorf("plain progress:\n%q\nwant\n%q", out, want)
	}
}
