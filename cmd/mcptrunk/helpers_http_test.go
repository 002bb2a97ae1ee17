package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// httpTrunk is `mcptrunk serve --http` on a port the OS picked.
type httpTrunk struct {
	*proc
	url  string // the MCP endpoint, as it logged it
	addr string // 127.0.0.1:PORT
}

// startHTTPTrunk runs `mcptrunk serve --http 127.0.0.1:0` on cfg and
// returns once /readyz says the first startup has settled.
func startHTTPTrunk(t testing.TB, ctx context.Context, cfg string) *httpTrunk {
	t.Helper()
	return serveHTTP(t, ctx, "mcptrunk serve --http", trunkCmd(newTag(t), "serve", "--http", "127.0.0.1:0", "--config", cfg))
}

// serveHTTP starts cmd, a `mcptrunk serve --http` (startProc: ended with
// SIGTERM at the end of the test), and returns its endpoint from the
// record it logs, once /readyz answers 200.
func serveHTTP(t testing.TB, ctx context.Context, name string, cmd *exec.Cmd) *httpTrunk {
	t.Helper()
	p := startProc(t, name, cmd, procOptions{stop: syscall.SIGTERM})
	pctx := p.ctx(ctx)
	u := servingURL(t, pctx, p.stderr, name)
	parsed, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	waitReady(t, pctx, httpClient(t), u, name, p.stderr)
	return &httpTrunk{proc: p, url: u, addr: parsed.Host}
}

// httpReply is what a raw POST to the HTTP downstream got back.
type httpReply struct {
	status   int
	header   http.Header
	messages []string // the JSON body, or each server-sent event's data
}

// postMCP POSTs one JSON-RPC message as a raw client does, taking JSON
// or an event stream, and reads the whole answer.
func postMCP(ctx context.Context, url, body string, headers map[string]string) (httpReply, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return httpReply{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		if k == "Host" {
			req.Host = v // the client sends req.Host, not a Host header
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return httpReply{}, err
	}
	defer resp.Body.Close()
	r := httpReply{status: resp.StatusCode, header: resp.Header}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, err := io.ReadAll(resp.Body)
		if len(strings.TrimSpace(string(b))) > 0 {
			r.messages = []string{strings.TrimSpace(string(b))}
		}
		return r, err
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		// A priming event's data is empty: it carries no message.
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && data != "" {
			r.messages = append(r.messages, data)
		}
	}
	return r, sc.Err()
}

// postSSE is postMCP for a request that must succeed with 200.
func postSSE(ctx context.Context, url, body string, headers map[string]string) ([]string, error) {
	r, err := postMCP(ctx, url, body, headers)
	if err != nil {
		return nil, err
	}
	if r.status != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d: %q", r.status, r.messages)
	}
	return r.messages, nil
}

// servingURLAttr is the URL in the record `serve --http` logs once it
// listens: the scheme and address, then the path.
var servingURLAttr = regexp.MustCompile(`\burl="?(https?://[^\s"/]+)(/[^\s"]*)`)

// servingURL waits for `serve --http` (its stderr) to log where it
// listens, and returns the MCP endpoint's URL.
func servingURL(t testing.TB, ctx context.Context, stderr *syncBuffer, name string) string {
	t.Helper()
	line, err := waitStderrLine(ctx, stderr, time.Minute, "serving MCP over HTTP", "url=")
	if err != nil {
		t.Fatalf("%s logged no URL: %v\nstderr:\n%s", name, err, tail(stderr.String(), 3000))
	}
	m := servingURLAttr.FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("%s: no url=http://HOST:PORT/PATH in %q", name, line)
	}
	return m[1] + m[2]
}

// waitReady waits until the trunk serving mcpURL answers /readyz with 200:
// its first startup has settled.
func waitReady(t testing.TB, ctx context.Context, c *http.Client, mcpURL, name string, stderr *syncBuffer) {
	t.Helper()
	u, err := url.Parse(mcpURL)
	if err != nil {
		t.Fatal(err)
	}
	ready := u.Scheme + "://" + u.Host + "/readyz"
	if err := eventually(ctx, 20*time.Millisecond, func() error { return wantStatus(ctx, c, http.MethodGet, ready, http.StatusOK) }); err != nil {
		t.Fatalf("%s never became ready: %v\nstderr:\n%s", name, err, tail(stderr.String(), 3000))
	}
}

// wantStatus sends a bodiless request and checks its status.
func wantStatus(ctx context.Context, c *http.Client, method, url string, want int) error {
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: %d, want %d", method, url, resp.StatusCode, want)
	}
	return nil
}
