//go:build !windows

package main

// docs/examples/replicas.json as docs/deploy.md runs it: two `serve
// --http` replicas sharing one Redis (trunk.state) behind HAProxy with
// deploy/haproxy.cfg, round robin. The limit of the example holds across
// both as it would in one process.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/accesstoken/testissuer"
	"github.com/mcptrunk/mcptrunk/internal/limits"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/internal/testkit"
)

// TestDeployReplicasShareLimits: 30 stateless calls of
// mcp__weather__forecast by one user, sent at once through HAProxy and
// spread over both replicas: exactly 20 are answered and 10 refused with
// the time to retry (a tool error naming the limit, and Retry-After);
// both replicas served some; another user's call right after goes
// through. Counted in each replica's memory, 30 would go through. With
// Redis stopped, calls no limit counts go on, and a counted one is
// refused naming the store; when it is back, counting goes on.
func TestDeployReplicasShareLimits(t *testing.T) {
	t.Parallel()
	bin := needHAProxy(t)
	ctx := testCtx(t, 2*time.Minute)
	tag := newTag(t)
	t.Cleanup(func() { assertNoProcesses(t, tag, 10*time.Second) })
	iss := testissuer.New(t)
	store := testkit.StartRedis(t, testkit.RedisOptions{})
	dir := t.TempDir()
	example, err := os.ReadFile(filepath.Join(moduleRoot, "docs", "examples", "replicas.json"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, keyFile := filepath.Join(dir, "replicas.json"), filepath.Join(dir, "state.key")
	if err := os.WriteFile(cfg, example, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, []byte(strings.Repeat("5a", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const trunkURL = "http://trunk.test"
	env := []string{"ISSUER_URL=" + iss.URL, "TRUNK_URL=" + trunkURL, "MCPTRUNK_BIN=" + binDir,
		"REDIS_URL=" + store.URL(), "STATE_KEY_FILE=" + keyFile}
	a := startDeployReplica(t, ctx, "replica1", cfg, env...)
	b := startDeployReplica(t, ctx, "replica2", cfg, env...)
	lb := startDeployHAProxy(t, ctx, bin, tag, a, b)

	ada := iss.Token(t, "ada", trunkURL+"/mcp", groupClaims("admin"))
	sam := iss.Token(t, "sam", trunkURL+"/mcp", groupClaims("support"))
	const tool = "mcp__weather__forecast"
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + withMeta(`{"name":"`+tool+`","arguments":{"city":"Oslo"}}`) + `}`
	forecast := func(token string) (httpReply, error) {
		return postMCP(ctx, lb.url, call, map[string]string{"Authorization": "Bearer " + token,
			protocol.HeaderProtocolVersion: protocol.Stateless, protocol.HeaderMethod: "tools/call", protocol.HeaderName: tool})
	}

	before := answeredBy(t, ctx, lb)
	replies := make([]httpReply, 30)
	errs := make([]error, 30)
	var wg sync.WaitGroup
	began := time.Now()
	for i := range replies {
		wg.Go(func() { replies[i], errs[i] = forecast(ada) })
	}
	wg.Wait()
	took := time.Since(began)
	answered, refused := 0, 0
	for i, r := range replies {
		if errs[i] != nil {
			t.Fatalf("call %d: %v", i+1, errs[i])
		}
		if r.status != http.StatusOK {
			t.Fatalf("call %d: HTTP %d %q\nreplica1:\n%s", i+1, r.status, r.messages, tail(a.stderr.String(), 3000))
		}
		res := answerIn(t, r, 1)
		if res.Err != nil {
			t.Fatalf("call %d: %+v", i+1, res.Err)
		}
		refusal, limited := limits.InResult(res.Result)
		if !limited {
			var tr struct {
				Content []struct{ Text string }
				IsError bool
			}
			if err := json.Unmarshal(res.Result, &tr); err != nil || tr.IsError || len(tr.Content) == 0 || !strings.Contains(tr.Content[0].Text, "Oslo") {
				t.Fatalf("call %d answered %s", i+1, res.Result)
			}
			answered++
			continue
		}
		refused++
		secs, err := strconv.Atoi(r.header.Get("Retry-After"))
		if refusal.Limit != "forecasts" || refusal.RetryAfter < 1 || refusal.RetryAfter > 3 || refusal.RetryAt.IsZero() || err != nil || secs != refusal.RetryAfter {
			t.Errorf("call %d refused with %+v, Retry-After %q; want limit forecasts, a retry within 3s (20 a minute: one every 3s) and Retry-After saying it", i+1, refusal, r.header.Get("Retry-After"))
		}
	}
	if answered != 20 || refused != 10 {
		t.Fatalf("of 30 calls by ada through both replicas, %d were answered and %d refused in %s; want 20 and 10", answered, refused, took)
	}
	after := answeredBy(t, ctx, lb)
	for _, name := range []string{"replica1", "replica2"} {
		if after[name] <= before[name] {
			t.Errorf("%s answered none of the 30 calls (2xx %d before, %d after): they should go round robin", name, before[name], after[name])
		}
	}

	if err := answeredCall(forecast(sam)); err != nil {
		t.Errorf("sam's call after ada's 30: %v", err)
	}

	// Redis stopped: a call no limit counts goes on; a forecast cannot be
	// checked and is refused, naming the store and the limit; once Redis
	// is back, forecasts are counted again.
	store.Stop()
	echo := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + withMeta(`{"name":"mcp__notes__echo","arguments":{"text":"no store"}}`) + `}`
	for i := range 2 { // both replicas
		r, err := postMCP(ctx, lb.url, echo, map[string]string{"Authorization": "Bearer " + ada,
			protocol.HeaderProtocolVersion: protocol.Stateless, protocol.HeaderMethod: "tools/call", protocol.HeaderName: "mcp__notes__echo"})
		if err != nil || r.status != http.StatusOK || answerIn(t, r, 1).Err != nil || !strings.Contains(strings.Join(r.messages, ""), "no store") {
			t.Errorf("echo %d with Redis stopped: HTTP %d %q, %v; want it answered", i+1, r.status, r.messages, err)
		}
	}
	r, err := forecast(sam)
	if err != nil {
		t.Fatal(err)
	}
	res := answerIn(t, r, 1)
	text := string(res.Result)
	if r.status != http.StatusOK || res.Err != nil || !strings.Contains(text, `"isError":true`) || !strings.Contains(text, `could not be checked`) ||
		!strings.Contains(text, store.URL()) || !strings.Contains(text, `forecasts`) {
		t.Errorf("sam's forecast with Redis stopped: HTTP %d, %+v, %s; want a tool error naming the store and the limit", r.status, res.Err, text)
	}
	store.Start()
	if err := eventually(ctx, 50*time.Millisecond, func() error { return answeredCall(forecast(sam)) }); err != nil {
		t.Errorf("sam's forecast once Redis is back: %v", err)
	}
}

// answeredCall checks that a stateless tools/call's reply is an answer: 200,
// a result that is not a tool error, no Retry-After.
func answeredCall(r httpReply, err error) error {
	if err != nil {
		return err
	}
	if r.status != http.StatusOK || len(r.messages) != 1 || r.header.Get("Retry-After") != "" {
		return fmt.Errorf("HTTP %d %q, Retry-After %q", r.status, r.messages, r.header.Get("Retry-After"))
	}
	var m struct {
		Result *struct {
			IsError bool `json:"isError"`
		} `json:"result"`
	}
	if json.Unmarshal([]byte(r.messages[0]), &m) != nil || m.Result == nil || m.Result.IsError {
		return fmt.Errorf("not an answer: %s", r.messages[0])
	}
	return nil
}
