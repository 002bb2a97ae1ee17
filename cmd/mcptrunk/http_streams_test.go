package main

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sseEvent is one server-sent event: its id and data.
type sseEvent struct{ id, data string }

// sseReader reads the events of one HTTP response.
type sseReader struct {
	resp *http.Response
	sc   *bufio.Scanner
}

// openSSE sends req and returns its event stream, failing unless the
// answer is one.
func openSSE(t *testing.T, req *http.Request) *sseReader {
	t.Helper()
	r, err := startSSE(req)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// startSSE is openSSE for any goroutine: an error when the answer is no
// event stream.
func startSSE(req *http.Request) (*sseReader, error) {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body.Close()
		return nil, fmt.Errorf("%s %s: HTTP %d %s, want an event stream", req.Method, req.URL, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	return &sseReader{resp: resp, sc: sc}, nil
}

// next returns the next event, or false when the stream ended.
func (r *sseReader) next() (sseEvent, bool) {
	var ev sseEvent
	for r.sc.Scan() {
		line := r.sc.Text()
		switch {
		case line == "" && ev.data != "":
			return ev, true
		case strings.HasPrefix(line, "id: "):
			ev.id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "data: "):
			ev.data = strings.TrimPrefix(line, "data: ")
		}
	}
	return ev, false
}

func (r *sseReader) close() { r.resp.Body.Close() }

// rawSession opens a 2025-11-25 session on the trunk with raw requests.
func rawSession(t *testing.T, ctx context.Context, url string) string {
	t.Helper()
	return rawSessionWith(t, ctx, url, initializeBody)
}

// rawSessionWith is rawSession with initialize's body.
func rawSessionWith(t *testing.T, ctx context.Context, url, initialize string) string {
	t.Helper()
	r, err := postMCP(ctx, url, initialize, nil)
	if err != nil || r.status != http.StatusOK {
		t.Fatalf("initialize: %v %d %q", err, r.status, r.messages)
	}
	id := r.header.Get("Mcp-Session-Id")
	if r, err := postMCP(ctx, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, map[string]string{"Mcp-Session-Id": id}); err != nil || r.status != http.StatusAccepted {
		t.Fatalf("initialized: %v %d", err, r.status)
	}
	return id
}

func sessionRequest(t *testing.T, ctx context.Context, method, url, session, body string, headers map[string]string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Mcp-Session-Id", session)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	return req
}

// A client whose connection drops in the middle of a call's stream gets
// the rest, and the answer, by resuming with Last-Event-ID; the session's
// standalone GET stream carries what belongs to no request (a list
// change); DELETE ends the session.
func TestHTTPStreams(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 2*time.Minute)
	cfg := writeConfig(t, map[string]server{"conformance": pin2025(server{"command": conformanceBin(t)})}, nil)
	trunk := startHTTPTrunk(t, ctx, cfg)
	session := rawSession(t, ctx, trunk.url)

	// The call's stream: read its first event, then drop the connection.
	callCtx, dropCall := context.WithCancel(ctx)
	call := openSSE(t, sessionRequest(t, callCtx, http.MethodPost, trunk.url, session,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"mcp__conformance__test_tool_with_progress","arguments":{},"_meta":{"progressToken":"p"}}}`, nil))
	first, ok := call.next()
	if !ok || !strings.Contains(first.data, `"notifications/progress"`) || first.id == "" {
		t.Fatalf("the call's first event: %+v, want its first progress with an id", first)
	}
	dropCall()
	call.close()

	resumed := openSSE(t, sessionRequest(t, ctx, http.MethodGet, trunk.url, session, "", map[string]string{"Last-Event-ID": first.id}))
	var rest []string
	for ev, ok := resumed.next(); ok; ev, ok = resumed.next() {
		rest = append(rest, ev.data)
	}
	resumed.close()
	if len(rest) != 3 || !strings.Contains(rest[0], `"progress":50`) || !strings.Contains(rest[1], `"progress":100`) || !strings.Contains(rest[2], `"id":7`) || !strings.Contains(rest[2], `"result"`) {
		t.Fatalf("resumed after %s: %q, want the two later progress notifications and the answer", first.id, rest)
	}

	// The standalone stream gets the list change a call causes.
	if r, err := postMCP(ctx, trunk.url, `{"jsonrpc":"2.0","id":8,"method":"tools/list"}`, map[string]string{"Mcp-Session-Id": session}); err != nil || r.status != http.StatusOK {
		t.Fatalf("tools/list: %v %d", err, r.status)
	}
	standalone := openSSE(t, sessionRequest(t, ctx, http.MethodGet, trunk.url, session, "", nil))
	defer standalone.close()
	if r, err := postMCP(ctx, trunk.url, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"mcp__conformance__test_trigger_tool_change","arguments":{}}}`,
		map[string]string{"Mcp-Session-Id": session}); err != nil || r.status != http.StatusOK {
		t.Fatalf("test_trigger_tool_change: %v %d", err, r.status)
	}
	ev, ok := standalone.next()
	if !ok || !strings.Contains(ev.data, `"notifications/tools/list_changed"`) {
		t.Fatalf("the standalone stream: %+v, %v; want notifications/tools/list_changed", ev, ok)
	}
	// A second standalone stream of the same session is refused.
	dup, err := http.DefaultClient.Do(sessionRequest(t, ctx, http.MethodGet, trunk.url, session, "", nil))
	if err != nil {
		t.Fatal(err)
	}
	dup.Body.Close()
	if dup.StatusCode != http.StatusConflict {
		t.Errorf("a second GET stream: HTTP %d, want 409", dup.StatusCode)
	}

	del, err := http.DefaultClient.Do(sessionRequest(t, ctx, http.MethodDelete, trunk.url, session, "", nil))
	if err != nil {
		t.Fatal(err)
	}
	del.Body.Close()
	if del.StatusCode != http.StatusNoContent {
		t.Errorf("DELETE: HTTP %d, want 204", del.StatusCode)
	}
	if _, ok := standalone.next(); ok {
		t.Error("the standalone stream goes on after DELETE")
	}
	if r, err := postMCP(ctx, trunk.url, `{"jsonrpc":"2.0","id":10,"method":"ping"}`, map[string]string{"Mcp-Session-Id": session}); err != nil || r.status != http.StatusNotFound {
		t.Errorf("after DELETE: %v %d, want 404", err, r.status)
	}
}

// --tls-cert and --tls-key serve HTTPS.
func TestHTTPTLS(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, time.Minute)
	dir := t.TempDir()
	certFile, keyFile, pool := selfSignedCert(t, dir)
	cfg := writeConfig(t, map[string]server{"notes": notesServer()}, nil)
	p := startProc(t, "mcptrunk", trunkCmd(newTag(t), "serve", "--http", "127.0.0.1:0", "--tls-cert", certFile, "--tls-key", keyFile, "--config", cfg), procOptions{})
	url := servingURL(t, p.ctx(ctx), p.stderr, "mcptrunk serve --http --tls-cert")
	if !strings.HasPrefix(url, "https://") {
		t.Fatalf("logged %q, want an https URL", url)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(initializeBody))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") == "" || resp.TLS == nil {
		t.Errorf("initialize over TLS: HTTP %d, session %q, TLS %v", resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), resp.TLS != nil)
	}
}

// selfSignedCert writes a certificate for 127.0.0.1 and its key, and
// returns a pool that trusts it.
func selfSignedCert(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "mcptrunk test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}
