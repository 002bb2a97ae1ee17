package main

// The caller's view on the paths besides a direct request, through serve
// --http with signed-in callers: subscriptions, the Mcp-Param header
// check, a session whose caller's token changes, what initialize and
// server/discover tell of the servers, and a multi-round requestState.
// alice is an admin (she sees everything), bob is support (two tools of
// the conformance server); server "secret" is hidden from support.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/accesstoken/testissuer"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
)

// pathsTrunk is serve --http with trunk.policy, its issuer's tokens for
// alice as admin and as support, and for bob as support.
type pathsTrunk struct {
	*httpTrunk
	alice, aliceSupport, bob string
}

const (
	pathsResource = "http://trunk.test/mcp"
	watchedURI    = "mcptrunk://conf/test://watched-resource"
	secretExt     = "io.example/secret"
	secretText    = "Secret instructions of the hidden server."
)

func startPathsTrunk(t *testing.T, ctx context.Context) *pathsTrunk {
	t.Helper()
	iss := testissuer.New(t)
	cfg := writeConfig(t, map[string]server{
		"conf":   pin2025(server{"command": conformanceBin(t), "timeouts": map[string]string{"call": "30s"}}),
		"secret": chaosWithEnv(map[string]string{"CHAOS_INSTRUCTIONS": secretText, "CHAOS_EXTENSION": secretExt, "CHAOS_NO_HANG": "1"}),
	}, map[string]any{
		"startupWait": "60s",
		"http":        map[string]any{"auth": map[string]any{"issuer": iss.URL, "resource": pathsResource, "scopes": []string{"mcp"}}},
		"policy": map[string]any{"rules": []map[string]string{
			{"allow": `"admin" in claims.?groups.orValue([])`},
			{"allow": `"support" in claims.?groups.orValue([]) && server == "conf" && name in ["test_elicitation", "test_simple_text"]`},
		}},
	})
	token := func(sub string, groups ...string) string {
		return iss.Token(t, sub, pathsResource, map[string]any{"scope": "mcp", "groups": groups})
	}
	return &pathsTrunk{httpTrunk: startHTTPTrunk(t, ctx, cfg),
		alice: token("alice", "admin"), aliceSupport: token("alice", "support"), bob: token("bob", "support")}
}

// authSession is a raw 2025-11-25 session of serve --http: each request
// carries the token it is given.
type authSession struct {
	url, id string
	init    json.RawMessage // initialize's result
	seq     int
}

func openAuthSession(t *testing.T, ctx context.Context, url, token string) *authSession {
	t.Helper()
	r, err := postMCP(ctx, url, initializeBody, map[string]string{"Authorization": "Bearer " + token})
	if err != nil || r.status != http.StatusOK {
		t.Fatalf("initialize: %v, HTTP %d %q", err, r.status, r.messages)
	}
	s := &authSession{url: url, id: r.header.Get(protocol.HeaderSessionID), seq: 1}
	s.init = answerIn(t, r, 1).Result
	if r, err := postMCP(ctx, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		map[string]string{protocol.HeaderSessionID: s.id, "Authorization": "Bearer " + token}); err != nil || r.status != http.StatusAccepted {
		t.Fatalf("initialized: %v, HTTP %d", err, r.status)
	}
	return s
}

// call sends one request on the session with token and returns its HTTP
// status and answer (none for a status other than 200).
func (s *authSession) call(t *testing.T, ctx context.Context, token, method string, params any) (int, rawResponse) {
	t.Helper()
	s.seq++
	body := mustJSON(map[string]any{"jsonrpc": "2.0", "id": s.seq, "method": method, "params": params})
	r, err := postMCP(ctx, s.url, body, map[string]string{protocol.HeaderSessionID: s.id, "Authorization": "Bearer " + token})
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	if r.status != http.StatusOK {
		return r.status, rawResponse{}
	}
	return r.status, answerIn(t, r, s.seq)
}

// statelessAs sends one 2026-07-28 request with token and the revision's
// headers (Mcp-Name: name) plus extra, and returns its HTTP status and
// answer.
func statelessAs(t *testing.T, ctx context.Context, url, token, method, name string, params map[string]any, extra map[string]string) (int, rawResponse) {
	t.Helper()
	r := statelessReply(t, ctx, url, token, method, name, params, extra)
	return r.status, answerIn(t, r, 1)
}

// statelessReply is statelessAs's whole reply, headers and all.
func statelessReply(t *testing.T, ctx context.Context, url, token, method, name string, params map[string]any, extra map[string]string) httpReply {
	t.Helper()
	p := map[string]any{"_meta": statelessMeta(`{"elicitation":{}}`)}
	for k, v := range params {
		p[k] = v
	}
	headers := map[string]string{"Authorization": "Bearer " + token, protocol.HeaderProtocolVersion: protocol.Stateless, protocol.HeaderMethod: method}
	if name != "" {
		headers[protocol.HeaderName] = name
	}
	for k, v := range extra {
		headers[k] = v
	}
	r, err := postMCP(ctx, url, mustJSON(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": p}), headers)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return r
}

// answerIn is the response with id among a reply's messages.
func answerIn(t *testing.T, r httpReply, id int) rawResponse {
	t.Helper()
	for _, msg := range r.messages {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *rpcError       `json:"error"`
		}
		if json.Unmarshal([]byte(msg), &m) == nil && string(m.ID) == fmt.Sprint(id) && (m.Result != nil || m.Error != nil) {
			return rawResponse{Result: m.Result, Err: m.Error}
		}
	}
	t.Fatalf("HTTP %d: no answer to request %d in %q", r.status, id, r.messages)
	return rawResponse{}
}

// sameRefusal checks that hidden's answer is missing's, but for the name
// each names: no answer tells a caller a hidden item is there.
func sameRefusal(t *testing.T, what string, hidden, missing rawResponse, hiddenName, missingName string) {
	t.Helper()
	switch {
	case hidden.Err == nil:
		t.Errorf("%s: hidden %s gave a result %s, want the refusal of a missing one", what, hiddenName, hidden.Result)
	case missing.Err == nil:
		t.Errorf("%s: missing %s gave a result %s", what, missingName, missing.Result)
	case hidden.Err.Code != missing.Err.Code || strings.ReplaceAll(hidden.Err.Message, hiddenName, missingName) != missing.Err.Message:
		t.Errorf("%s: hidden %s: %d %q; missing %s: %d %q; want the same answer", what, hiddenName, hidden.Err.Code, hidden.Err.Message, missingName, missing.Err.Code, missing.Err.Message)
	}
}

// A resources/subscribe is admitted by the caller's own view, whoever
// holds the subscription already: bob's of a URI hidden from him is
// refused as a missing URI is, before and after alice subscribed to it.
func TestPolicySubscribeAsksEveryCaller(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 2*time.Minute)
	tr := startPathsTrunk(t, ctx)
	alice := openAuthSession(t, ctx, tr.url, tr.alice)
	bob := openAuthSession(t, ctx, tr.url, tr.bob)
	const missing = "mcptrunk://conf/test://no-such-resource"
	subscribe := func(s *authSession, token, uri string) rawResponse {
		t.Helper()
		status, r := s.call(t, ctx, token, "resources/subscribe", map[string]any{"uri": uri})
		if status != http.StatusOK {
			t.Fatalf("resources/subscribe %s: HTTP %d", uri, status)
		}
		return r
	}
	sameRefusal(t, "before anyone subscribed", subscribe(bob, tr.bob, watchedURI), subscribe(bob, tr.bob, missing), watchedURI, missing)
	if r := subscribe(alice, tr.alice, watchedURI); r.Err != nil {
		t.Fatalf("alice, who sees it, subscribing: %v", r.Err)
	}
	sameRefusal(t, "while alice holds it", subscribe(bob, tr.bob, watchedURI), subscribe(bob, tr.bob, missing), watchedURI, missing)

	// A stateless listen is admitted URI by URI the same way: its
	// acknowledgement honours neither the hidden URI nor the missing one.
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	body := mustJSON(map[string]any{"jsonrpc": "2.0", "id": 7, "method": protocol.MethodListen, "params": map[string]any{
		"notifications": map[string]any{"resourceSubscriptions": []string{watchedURI, missing}, "toolsListChanged": true},
		"_meta":         statelessMeta(`{}`)}})
	req, err := http.NewRequestWithContext(lctx, http.MethodPost, tr.url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Authorization": "Bearer " + tr.bob,
		protocol.HeaderProtocolVersion: protocol.Stateless, protocol.HeaderMethod: protocol.MethodListen} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	ack, ok := <-sseMessages(resp)
	if !ok || !strings.Contains(string(ack), protocol.NotificationAcknowledged) || !strings.Contains(string(ack), "toolsListChanged") {
		t.Fatalf("bob's listen: HTTP %d, first message %s, want its acknowledgement", resp.StatusCode, ack)
	}
	if strings.Contains(string(ack), "watched-resource") || strings.Contains(string(ack), "no-such-resource") {
		t.Errorf("bob's listen honoured %s, want neither the hidden URI nor the missing one", ack)
	}
}

// The Mcp-Param header check of a stateless call reads the caller's
// view: bob's call of a tool hidden from him that mirrors an argument in
// a header, sent without it, gets what a missing tool gets, not a -32020
// naming the tool's argument; alice, who sees the tool, gets the -32020.
func TestPolicyParamHeaderCheckAsksTheView(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 2*time.Minute)
	tr := startPathsTrunk(t, ctx)
	const hidden, missing = "mcp__conf__test_x_mcp_header", "mcp__conf__test_x_mcp_headez"
	call := func(token, name string) (int, rawResponse) {
		return statelessAs(t, ctx, tr.url, token, "tools/call", name, map[string]any{"name": name, "arguments": map[string]any{"region": "eu"}}, nil)
	}
	status, r := call(tr.alice, hidden)
	if status != http.StatusBadRequest || r.Err == nil || r.Err.Code != protocol.CodeHeaderMismatch {
		t.Fatalf("alice without Mcp-Param-Region: HTTP %d %+v, want 400 with %d", status, r.Err, protocol.CodeHeaderMismatch)
	}
	hs, hr := call(tr.bob, hidden)
	ms, mr := call(tr.bob, missing)
	if hs != ms {
		t.Errorf("bob's call of the hidden tool: HTTP %d; of a missing one: HTTP %d", hs, ms)
	}
	sameRefusal(t, "a stateless call without its header", hr, mr, hidden, missing)
	if hr.Err != nil && strings.Contains(hr.Err.Message, "region") {
		t.Errorf("the refusal names the hidden tool's argument: %q", hr.Err.Message)
	}
}

// A session's view follows its caller's current token: alice's session,
// opened as admin, refuses the hidden server's tool to her support token
// as a missing tool, lists none of it, and serves it again to her admin
// token. bob's token never rides her session.
func TestPolicySessionFollowsCurrentToken(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 2*time.Minute)
	tr := startPathsTrunk(t, ctx)
	s := openAuthSession(t, ctx, tr.url, tr.alice)
	const hidden, missing = "mcp__secret__ping_tool", "mcp__secret__pong_tool"
	ping := func(token, name string) rawResponse {
		t.Helper()
		status, r := s.call(t, ctx, token, "tools/call", map[string]any{"name": name, "arguments": map[string]any{}})
		if status != http.StatusOK {
			t.Fatalf("tools/call %s: HTTP %d", name, status)
		}
		return r
	}
	if r := ping(tr.alice, hidden); r.Err != nil {
		t.Fatalf("alice as admin: %v", r.Err)
	}
	sameRefusal(t, "alice's session with her support token", ping(tr.aliceSupport, hidden), ping(tr.aliceSupport, missing), hidden, missing)
	_, list := s.call(t, ctx, tr.aliceSupport, "tools/list", map[string]any{})
	if list.Err != nil || strings.Contains(string(list.Result), "mcp__secret__") || !strings.Contains(string(list.Result), "mcp__conf__test_simple_text") {
		t.Errorf("tools/list with her support token: %s %v, want conf's two tools and nothing of secret's", list.Result, list.Err)
	}
	if r := ping(tr.alice, hidden); r.Err != nil {
		t.Errorf("alice as admin again: %v", r.Err)
	}
	if status, _ := s.call(t, ctx, tr.bob, "tools/list", map[string]any{}); status != http.StatusNotFound {
		t.Errorf("bob's token on alice's session: HTTP %d, want 404", status)
	}
}

// initialize and server/discover tell a caller only of the servers it
// sees: bob is not given the hidden server's instructions, nor told of
// the extension only it declares; alice is.
func TestPolicyDiscoveryShowsTheView(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 2*time.Minute)
	tr := startPathsTrunk(t, ctx)
	for _, c := range []struct {
		who, token string
		sees       bool
	}{{"alice", tr.alice, true}, {"bob", tr.bob, false}} {
		s := openAuthSession(t, ctx, tr.url, c.token)
		var init struct {
			Capabilities struct {
				Extensions map[string]json.RawMessage `json:"extensions"`
			} `json:"capabilities"`
		}
		if err := json.Unmarshal(s.init, &init); err != nil {
			t.Fatal(err)
		}
		if _, declared := init.Capabilities.Extensions[secretExt]; declared != c.sees {
			t.Errorf("%s's initialize declares %s: %v, want %v (%s)", c.who, secretExt, declared, c.sees, s.init)
		}
		_, r := statelessAs(t, ctx, tr.url, c.token, protocol.MethodDiscover, "", map[string]any{}, nil)
		if r.Err != nil {
			t.Fatalf("%s's server/discover: %v", c.who, r.Err)
		}
		var disc struct {
			Instructions string `json:"instructions"`
			Capabilities struct {
				Extensions map[string]json.RawMessage `json:"extensions"`
			} `json:"capabilities"`
		}
		if err := json.Unmarshal(r.Result, &disc); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(disc.Instructions, secretText); got != c.sees {
			t.Errorf("%s's server/discover gives the hidden server's instructions: %v, want %v (%q)", c.who, got, c.sees, disc.Instructions)
		}
		if _, declared := disc.Capabilities.Extensions[secretExt]; declared != c.sees {
			t.Errorf("%s's server/discover declares %s: %v, want %v", c.who, secretExt, declared, c.sees)
		}
	}
}

// A multi-round requestState is its caller's: bob, who may call the tool,
// retrying with alice's state gets what a forged state gets, and alice's
// own retry then completes her call with her answer.
func TestPolicyRequestStateBoundToCaller(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 2*time.Minute)
	tr := startPathsTrunk(t, ctx)
	const tool = "mcp__conf__test_elicitation"
	call := func(token string, extra map[string]any) rawResponse {
		t.Helper()
		params := map[string]any{"name": tool, "arguments": map[string]any{"message": "Who are you?"}}
		for k, v := range extra {
			params[k] = v
		}
		status, r := statelessAs(t, ctx, tr.url, token, "tools/call", tool, params, nil)
		if status != http.StatusOK && r.Err == nil {
			t.Fatalf("tools/call: HTTP %d", status)
		}
		return r
	}
	first := call(tr.alice, nil)
	var ir inputRequiredResult
	if first.Err != nil || json.Unmarshal(first.Result, &ir) != nil || ir.ResultType != "input_required" || ir.RequestState == "" {
		t.Fatalf("alice's call: %s %v, want input_required with a requestState", first.Result, first.Err)
	}
	answer := func(user string) map[string]any {
		return map[string]any{firstKey(ir): map[string]any{"action": "accept", "content": map[string]any{"username": user}}}
	}
	forged := ir.RequestState[:len(ir.RequestState)-2] + "xx"
	stolen := call(tr.bob, map[string]any{"inputResponses": answer("bob"), "requestState": ir.RequestState})
	refused := call(tr.bob, map[string]any{"inputResponses": answer("bob"), "requestState": forged})
	sameRefusal(t, "bob with alice's state", stolen, refused, ir.RequestState, forged)
	done := call(tr.alice, map[string]any{"inputResponses": answer("alice"), "requestState": ir.RequestState})
	if done.Err != nil || !strings.Contains(string(done.Result), "alice") || strings.Contains(string(done.Result), "input_required") {
		t.Errorf("alice's retry: %s %v, want her call's result with her answer", done.Result, done.Err)
	}
}
