package main

// The status page in a real browser: `mcptrunk status` with a notes server
// and a chaos server, read by headless Chromium, which must see every
// server's state, and the chaos server turn restarting once its process is
// killed; a screenshot of the page is kept as the test's artifact.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/statuspage"
	"github.com/mcptrunk/mcptrunk/proxy"
)

// updateScreenshot, when set, also writes the screenshot to
// docs/status-page.png, the README's picture of the page (and docs/status-page.md's).
const updateScreenshot = "MCPTRUNK_UPDATE_SCREENSHOT"

// artifactsEnv names the directory a test's artifacts are copied to (a CI
// job uploads it); without it they go to a directory under the temporary one.
const artifactsEnv = "MCPTRUNK_ARTIFACTS"

var serverStateRE = regexp.MustCompile(`id="server-([^"]+)" data-state="([^"]+)"`)

func TestStatusPageInBrowser(t *testing.T) {
	needProc(t)
	browser := findChromium()
	if browser == "" {
		t.Skip("no chromium or chromium-browser on PATH: the status page's browser test needs one (Debian: apt-get install chromium; .ci/run installs it)")
	}
	t.Parallel()
	ctx := testCtx(t, 2*time.Minute)
	tag := newTag(t)
	state := chaosStateFile(t)
	// The chaos server serves its first start, then exits at its next four
	// (backing off 250 ms, 500 ms, 1 s, 2 s): killed, it stays restarting
	// for a few seconds, long enough for a browser to see it.
	cfg := writeConfig(t, map[string]server{
		"notes": notesServer(),
		"chaos": chaosServer("-mode", "exit", "-state-file", state, "-faulty-starts", "1-4", "-max-life", "60s"),
	}, nil)

	cmd := trunkCmd(tag, "status", "--config", cfg, "--listen", "127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "status page: "); ok {
				urls <- u
			}
		}
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("mcptrunk status ended with %v:\n%s", err, stderr.String())
			}
		case <-time.After(15 * time.Second):
			t.Errorf("mcptrunk status did not end within 15s of an interrupt")
			_ = cmd.Process.Kill()
			<-exited
		}
		checkNoRace(t, &stderr)
		assertNoProcesses(t, tag, 5*time.Second)
	})
	var url string
	select {
	case url = <-urls:
	case <-ctx.Done():
		t.Fatalf("mcptrunk status printed no URL:\n%s", stderr.String())
	}

	b := &headless{path: browser, profile: t.TempDir()}
	want := map[string]string{"notes": "ready", "chaos": "ready"}
	states, err := b.waitStates(ctx, url, func(s map[string]string) bool { return fmt.Sprint(s) == fmt.Sprint(want) })
	if err != nil {
		t.Fatalf("the page never showed %v (last %v): %v", want, states, err)
	}

	procs := procsOf(tag, chaosBin)
	if len(procs) != 1 {
		t.Fatalf("want one chaos process, found %v", procs)
	}
	p, err := os.FindProcess(procs[0].pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	states, err = b.waitStates(ctx, url, func(s map[string]string) bool { return s["chaos"] == "restarting" && s["notes"] == "ready" })
	if err != nil {
		t.Fatalf("the page never showed chaos restarting after its process was killed (last %v): %v", states, err)
	}

	shot := filepath.Join(t.TempDir(), "status.png")
	if out, err := b.run(ctx, "--screenshot="+shot, "--window-size=1200,800", url); err != nil {
		t.Fatalf("screenshot: %v\n%s", err, out)
	}
	png, err := os.ReadFile(shot)
	if err != nil || len(png) < 1000 || string(png[1:4]) != "PNG" {
		t.Fatalf("the screenshot is not a PNG (%d bytes, %v)", len(png), err)
	}
	saveArtifact(t, "status-page.png", png)
	if os.Getenv(updateScreenshot) != "" {
		if err := os.WriteFile(filepath.Join("..", "..", "docs", "status-page.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// findChromium is the path of Debian's chromium (or Ubuntu's
// chromium-browser), or "" when neither is installed.
func findChromium() string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// headless runs one headless Chromium per page load, with a profile of the
// test's own and everything that would reach the network off.
type headless struct{ path, profile string }

func (h *headless) run(ctx context.Context, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--user-data-dir=" + h.profile}
	cmd := exec.CommandContext(ctx, h.path, append(base, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return []byte(stderr.String()), err
	}
	return out, nil
}

// states loads url and reads each server's state from the DOM.
func (h *headless) states(ctx context.Context, url string) (map[string]string, error) {
	dom, err := h.run(ctx, "--dump-dom", url)
	if err != nil {
		return nil, fmt.Errorf("%v: %s", err, dom)
	}
	s := map[string]string{}
	for _, m := range serverStateRE.FindAllStringSubmatch(string(dom), -1) {
		s[m[1]] = m[2]
	}
	return s, nil
}

// waitStates loads the page again until its states satisfy ok, or ctx ends.
func (h *headless) waitStates(ctx context.Context, url string, ok func(map[string]string) bool) (map[string]string, error) {
	var last map[string]string
	err := eventually(ctx, 100*time.Millisecond, func() error {
		s, err := h.states(ctx, url)
		if err != nil {
			return err
		}
		last = s
		if !ok(s) {
			return fmt.Errorf("not yet")
		}
		return nil
	})
	return last, err
}

// saveArtifact keeps data under name where a CI job can collect it, and
// logs where.
func saveArtifact(t *testing.T, name string, data []byte) {
	t.Helper()
	dir := os.Getenv(artifactsEnv)
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "mcptrunk-test-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("artifact: %s", path)
}

// TestMetricsListenerServesStatusPage: the `serve --metrics` routes carry
// the page at / and its events, behind the listener's loopback checks.
func TestMetricsListenerServesStatusPage(t *testing.T) {
	cfg, err := config.Parse(strings.NewReader(`{"mcpServers":{"notes":{"command":"`+filepath.ToSlash(notesBin)+`"}}}`), os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	tr := proxy.New(cfg, nil)
	defer tr.Close(context.Background())
	tr.Start(nil, "")
	srv := httptest.NewServer(statuspage.Guard(observeMux(tr, nil), ""))
	defer srv.Close()
	ctx := testCtx(t, 30*time.Second)
	if !waitFor(ctx, 20*time.Second, func() bool { return strings.Contains(httpGet(t, ctx, srv.URL+"/"), `data-state="ready"`) }) {
		t.Fatalf("the page never showed notes ready:\n%s", httpGet(t, ctx, srv.URL+"/"))
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/events", nil)
	req.Header.Set("Origin", "http://evil.example")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("another site's script read the events: status %d", resp.StatusCode)
	}
}

func httpGet(t *testing.T, ctx context.Context, url string) string {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}

// TestServeHTTPNamesStatusPage: serve --http says on stderr where its
// status page is, and the page is there.
func TestServeHTTPNamesStatusPage(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, time.Minute)
	tr := startHTTPTrunk(t, ctx, writeConfig(t, map[string]server{"notes": notesServer()}, nil))
	line, err := waitStderrLine(ctx, tr.stderr, 10*time.Second, "status page", "url=")
	if err != nil {
		t.Fatalf("no status page line: %v\n%s", err, tr.stderr.String())
	}
	want := "http://" + tr.addr + "/"
	if !strings.Contains(line, "url="+want) {
		t.Fatalf("the status page line %q does not name %s", line, want)
	}
	if page := httpGet(t, ctx, want); !strings.Contains(page, "notes") {
		t.Errorf("%s is not the status page:\n%s", want, page)
	}
}
