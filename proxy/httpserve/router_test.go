package httpserve

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// events returns what a stream holds, as strings.
func events(st *stream) []string {
	st.mu.Lock()
	defer st.mu.Unlock()
	out := make([]string, len(st.events))
	for i, e := range st.events {
		out[i] = string(e.msg)
	}
	return out
}

// The router puts each message on the stream it belongs to: a response on
// its request's, progress on the stream of the request with that token,
// anything else on the GET stream, else the newest open POST stream, else
// a backlog the GET stream starts with.
func TestRouterRoutes(t *testing.T) {
	r := newRouter(testRouterConfig())
	// Before any stream: the backlog.
	_ = r.WriteMessage([]byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info"}}`))

	a, b := newStream("a"), newStream("b")
	if !r.expect([]byte(`1`), []byte(`"tok"`), a) || !r.expect([]byte(`"two"`), nil, b) {
		t.Fatal("expect refused a new id")
	}
	if r.expect([]byte(` 1`), nil, newStream("c")) {
		t.Error("a second request with id 1 in flight was accepted")
	}
	_ = r.WriteMessage([]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken": "tok","progress":1}}`))
	_ = r.WriteMessage([]byte(`{"jsonrpc":"2.0","method":"sampling/createMessage","id":5,"params":{}}`))
	if got := events(a); len(got) != 1 || !strings.Contains(got[0], `"progress":1`) {
		t.Errorf("stream a (token tok): %q, want its progress", got)
	}
	if got := events(b); len(got) != 1 || !strings.Contains(got[0], "sampling/createMessage") {
		t.Errorf("stream b (the newest open): %q, want the request to the host", got)
	}

	_ = r.WriteMessage([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	if got := events(a); len(got) != 2 || !a.final {
		t.Errorf("stream a after its response: %q final=%v", got, a.final)
	}
	// The answered stream takes nothing more, not even its token's progress.
	_ = r.WriteMessage([]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":2}}`))
	if got := events(b); len(got) != 2 || !strings.Contains(got[1], `"progress":2`) {
		t.Errorf("late progress: stream b has %q, want it as a general message", got)
	}

	get := r.openGet()
	if got := events(get); len(got) != 1 || !strings.Contains(got[0], "notifications/message") {
		t.Errorf("the GET stream starts with %q, want the backlog", got)
	}
	_ = r.WriteMessage([]byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`))
	if got := events(get); len(got) != 2 {
		t.Errorf("with a GET stream open, a general message went elsewhere: GET has %q", got)
	}
	if r.openGet() != get {
		t.Error("a second openGet made another stream")
	}
	if r.inFlight() != 1 {
		t.Errorf("inFlight %d, want 1 (b)", r.inFlight())
	}
	if r.find("a") != a || r.find("g") != get {
		t.Error("find lost a stream before it was read to its end")
	}
	r.forget(a)
	if r.find("a") != nil {
		t.Error("a forgotten stream is still found")
	}
	r.endAll("the test is over")
	if !get.ended {
		t.Error("endAll left the GET stream open")
	}
	// What b's exchange has not written yet stays for it: the request to
	// the host, then the error that ends it.
	if got := events(b); !b.final || len(got) != 2 || !strings.Contains(got[0], "sampling/createMessage") ||
		!strings.Contains(got[1], `"id":"two","error"`) || !strings.Contains(got[1], "not answered: the test is over") {
		t.Errorf("a request in flight at endAll: %q final=%v, want its unwritten request and an error naming the reason", got, b.final)
	}
}

// A message the trunk says belongs to a request (its label, that
// request's id) goes on that request's stream while it is open, even with
// the GET stream open, exactly as written; once the request is answered,
// or with no label, it goes where a general message goes.
func TestRouterRelated(t *testing.T) {
	r := newRouter(testRouterConfig())
	get := r.openGet()
	a, b := newStream("a"), newStream("b")
	if !r.expect([]byte(`"alice-call"`), nil, a) || !r.expect([]byte(`2`), nil, b) {
		t.Fatal("expect refused a new id")
	}
	ask := `{"jsonrpc":"2.0","id":9,"method":"elicitation/create","params":{"message":"confirm"}}`
	log := `{"jsonrpc":"2.0","method":"notifications/message","params":{"_meta":{"keep":1},"level":"info"}}`
	_ = r.WriteLabelled([]byte(ask), `"alice-call"`)
	_ = r.WriteLabelled([]byte(log), ` 2`)
	_ = r.WriteMessage([]byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"no label"}}`))
	if got := strings.Join(events(a), "\n"); got != ask {
		t.Errorf("stream a (alice-call): %s, want the request as written", got)
	}
	if got := strings.Join(events(b), "\n"); got != log {
		t.Errorf("stream b (call 2): %s, want the log line as written", got)
	}
	if got := events(get); len(got) != 1 || !strings.Contains(got[0], "no label") {
		t.Errorf("GET stream: %q, want the unlabelled line alone", got)
	}
	_ = r.WriteMessage([]byte(`{"jsonrpc":"2.0","id":2,"result":{}}`))
	_ = r.WriteLabelled([]byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"late"}}`), `2`)
	if got := events(get); len(got) != 2 || !strings.Contains(got[1], "late") {
		t.Errorf("GET stream after call 2 was answered: %q, want the late line", got)
	}
}

// A stream keeps at most keptEvents messages; a reader that far behind
// goes on from the oldest kept.
func TestStreamBound(t *testing.T) {
	r := newRouter(testRouterConfig())
	st := newStream("s")
	if !r.expect([]byte(`1`), nil, st) {
		t.Fatal("expect refused")
	}
	for range keptEvents + 10 {
		_ = r.WriteMessage([]byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{}}`))
	}
	_ = r.WriteMessage([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	st.send([]byte(`{"late":true}`), false)
	if got := events(st); len(got) != keptEvents || st.events[0].n != 12 {
		t.Fatalf("%d events kept from %d, want %d from 12", len(got), st.events[0].n, keptEvents)
	}
	rec := httptest.NewRecorder()
	if err := st.writeSSE(context.Background(), rec, 0, nil, false, false); err != nil {
		t.Fatal(err)
	}
	body := rec.Body.String()
	if n := strings.Count(body, "event: message"); n != keptEvents {
		t.Errorf("wrote %d events, want the %d kept", n, keptEvents)
	}
	if !strings.Contains(body, "id: s_12\n") || !strings.HasSuffix(body, `data: {"jsonrpc":"2.0","id":1,"result":{}}`+"\n\n") || strings.Contains(body, "late") {
		t.Errorf("events from the oldest kept (s_12) to the response, nothing after it:\n...%s", body[len(body)-200:])
	}
	if rec.Header().Get("Content-Type") != "text/event-stream" {
		t.Errorf("Content-Type %q", rec.Header().Get("Content-Type"))
	}
}

// Resuming from an event id writes what came after it, and only one
// exchange writes a stream at a time.
func TestStreamResume(t *testing.T) {
	st := newStream("s7")
	for _, m := range []string{`{"a":1}`, `{"a":2}`, `{"a":3}`} {
		st.send([]byte(m), false)
	}
	st.send([]byte(`{"id":1,"result":{}}`), true)
	sid, n, ok := parseEventID(st.eventID(2))
	if !ok || sid != "s7" || n != 2 {
		t.Fatalf("parseEventID(%q) = %q, %d, %v", st.eventID(2), sid, n, ok)
	}
	rec := httptest.NewRecorder()
	if err := st.writeSSE(context.Background(), rec, n, nil, true, false); err != nil {
		t.Fatal(err)
	}
	if body := rec.Body.String(); strings.Contains(body, `{"a":2}`) || !strings.Contains(body, "id: s7_3\nevent: message\ndata: {\"a\":3}") || !strings.Contains(body, `"result"`) {
		t.Errorf("resumed after s7_2:\n%s", body)
	}
	for _, bad := range []string{"", "nounderscore", "s_x", "_3", "s_-1"} {
		if _, _, ok := parseEventID(bad); ok {
			t.Errorf("parseEventID(%q) accepted", bad)
		}
	}
}

// A second exchange on a stream being written is refused, unless it
// resumes from an event id: then it takes the stream over, because the
// client that resumes has lost the first connection even when the server
// has not yet noticed (the first writer's ctx is still live here).
func TestStreamTakeOver(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st := newStream("s")
	st.send([]byte(`{"a":1}`), false)
	first := &flushSignal{ResponseRecorder: httptest.NewRecorder(), flushed: make(chan struct{}, 2)}
	firstDone := make(chan error, 1)
	go func() { firstDone <- st.writeSSE(context.Background(), first, 0, nil, false, false) }()
	for range 2 { // the headers, then event 1: the first writer now waits for more
		select {
		case <-first.flushed:
		case <-ctx.Done():
			t.Fatal("the first writer wrote nothing")
		}
	}
	if err := st.writeSSE(ctx, httptest.NewRecorder(), 0, nil, false, false); err != errStreamBusy {
		t.Errorf("a second writer: %v, want errStreamBusy", err)
	}

	resumed := httptest.NewRecorder()
	resumedDone := make(chan error, 1)
	go func() { resumedDone <- st.writeSSE(ctx, resumed, 1, nil, true, false) }()
	select {
	case err := <-firstDone:
		if err != errStreamTaken {
			t.Errorf("the first writer: %v, want errStreamTaken", err)
		}
	case <-ctx.Done():
		t.Fatal("the first writer still writes after the takeover")
	}
	st.send([]byte(`{"id":1,"result":{}}`), true)
	if err := <-resumedDone; err != nil {
		t.Fatalf("the resumption: %v", err)
	}
	if body := resumed.Body.String(); !strings.Contains(body, "id: s_2\nevent: message\ndata: {\"id\":1") {
		t.Errorf("resumed after s_1:\n%s", body)
	}
}

// flushSignal is a recorder that says when it was flushed.
type flushSignal struct {
	*httptest.ResponseRecorder
	flushed chan struct{}
}

func (f *flushSignal) Flush() {
	f.ResponseRecorder.Flush()
	select {
	case f.flushed <- struct{}{}:
	default:
	}
}

// onlyResponse decides JSON against SSE: undecided with nothing, JSON
// when the response is all there is, SSE when anything came first.
func TestOnlyResponse(t *testing.T) {
	st := newStream("s")
	if _, _, decided := st.onlyResponse(); decided {
		t.Error("decided with nothing sent")
	}
	st.send([]byte(`{"id":1,"result":{}}`), true)
	if msg, only, decided := st.onlyResponse(); !decided || !only || string(msg) != `{"id":1,"result":{}}` {
		t.Errorf("the response alone: %s %v %v", msg, only, decided)
	}
	st2 := newStream("t")
	st2.send([]byte(`{"method":"notifications/progress"}`), false)
	if _, only, decided := st2.onlyResponse(); !decided || only {
		t.Errorf("progress first: only=%v decided=%v, want an event stream", only, decided)
	}
}

func TestAcceptsType(t *testing.T) {
	for _, tc := range []struct {
		accept, typ string
		want        bool
	}{
		{"application/json, text/event-stream", "text/event-stream", true},
		{"application/json;q=0.9", "application/json", true},
		{"text/*", "text/event-stream", true},
		{"*/*", "application/json", true},
		{"application/json", "text/event-stream", false},
		{"", "application/json", false},
	} {
		if got := acceptsType(tc.accept, tc.typ); got != tc.want {
			t.Errorf("acceptsType(%q, %q) = %v", tc.accept, tc.typ, got)
		}
	}
}

// The guard: Host on a loopback listener, Origin, and the token (a bearer
// on the MCP endpoint, ?token= also on the other GET routes).
func TestGuard(t *testing.T) {
	h := &Handler{opts: Options{Path: "/mcp", Token: "secret", LoopbackOnly: true, AllowedOrigins: []string{"https://app.example"}}.withDefaults()}
	g := h.guard(func(w http.ResponseWriter, _ *http.Request, a admitted) {
		if a.staticToken { // what the operators' routes admit by
			w.Header().Set("Static-Token", "yes")
		}
		w.WriteHeader(http.StatusTeapot)
	})
	for _, tc := range []struct {
		name, method, target, host string
		header                     map[string]string
		want                       int
	}{
		{"bearer", "POST", "/mcp", "127.0.0.1:8931", map[string]string{"Authorization": "Bearer secret"}, http.StatusTeapot},
		{"no token", "POST", "/mcp", "127.0.0.1:8931", nil, http.StatusUnauthorized},
		{"wrong token", "POST", "/mcp", "localhost:8931", map[string]string{"Authorization": "Bearer secreT"}, http.StatusUnauthorized},
		{"query token on /mcp", "GET", "/mcp?token=secret", "127.0.0.1:8931", nil, http.StatusUnauthorized},
		{"query token on the page", "GET", "/?token=secret", "127.0.0.1:8931", nil, http.StatusTeapot},
		{"rebound Host", "POST", "/mcp", "evil.example", map[string]string{"Authorization": "Bearer secret"}, http.StatusForbidden},
		{"IPv6 loopback", "POST", "/mcp", "[::1]:8931", map[string]string{"Authorization": "Bearer secret"}, http.StatusTeapot},
		{"foreign Origin", "POST", "/mcp", "127.0.0.1:8931", map[string]string{"Authorization": "Bearer secret", "Origin": "http://evil.example"}, http.StatusForbidden},
		{"own Origin", "POST", "/mcp", "127.0.0.1:8931", map[string]string{"Authorization": "Bearer secret", "Origin": "http://127.0.0.1:8931"}, http.StatusTeapot},
		{"allowed Origin", "POST", "/mcp", "127.0.0.1:8931", map[string]string{"Authorization": "Bearer secret", "Origin": "https://app.example"}, http.StatusTeapot},
		{"preflight", "OPTIONS", "/mcp", "127.0.0.1:8931", map[string]string{"Origin": "https://app.example"}, http.StatusTeapot},
	} {
		req := httptest.NewRequest(tc.method, tc.target, nil)
		req.Host = tc.host
		for k, v := range tc.header {
			req.Header.Set(k, v)
		}
		rec := httptest.NewRecorder()
		g.ServeHTTP(rec, req)
		if rec.Code != tc.want {
			t.Errorf("%s: HTTP %d, want %d (%s)", tc.name, rec.Code, tc.want, strings.TrimSpace(rec.Body.String()))
		}
		if byToken := tc.method != "OPTIONS"; rec.Code == http.StatusTeapot && (rec.Header().Get("Static-Token") == "yes") != byToken {
			t.Errorf("%s: admitted with the static token: %q, want %v", tc.name, rec.Header().Get("Static-Token"), byToken)
		}
		if rec.Code == http.StatusUnauthorized && !strings.HasPrefix(rec.Header().Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s: 401 without WWW-Authenticate", tc.name)
		}
		if tc.header["Origin"] == "https://app.example" && rec.Header().Get("Access-Control-Allow-Origin") != "https://app.example" {
			t.Errorf("%s: no CORS header for an allowed origin", tc.name)
		}
	}
}

// A primed stream starts with an event that has an id, the retry time and
// empty data; resuming from that id replays every message. A stream whose
// events carry no id (a stateless request's) is never primed.
func TestStreamPriming(t *testing.T) {
	st := newStream("s3")
	st.send([]byte(`{"a":1}`), false)
	st.send([]byte(`{"id":1,"result":{}}`), true)
	rec := httptest.NewRecorder()
	if err := st.writeSSE(context.Background(), rec, 0, nil, false, true); err != nil {
		t.Fatal(err)
	}
	prime := "id: s3_0\nevent: prime\nretry: 1000\ndata: \n\n"
	if body := rec.Body.String(); !strings.HasPrefix(body, prime) || !strings.Contains(body, "id: s3_1\nevent: message\ndata: {\"a\":1}") {
		t.Fatalf("a primed stream:\n%s", body)
	}
	_, n, ok := parseEventID("s3_0")
	if !ok || n != 0 {
		t.Fatalf("parseEventID(s3_0) = %d, %v", n, ok)
	}
	rec = httptest.NewRecorder()
	if err := st.writeSSE(context.Background(), rec, n, nil, true, false); err != nil {
		t.Fatal(err)
	}
	if body := rec.Body.String(); !strings.Contains(body, `{"a":1}`) || !strings.Contains(body, `"result"`) || strings.Contains(body, "prime") {
		t.Errorf("resumed from the priming event's id:\n%s", body)
	}

	stateless := newStream("s4")
	stateless.unnumbered = true
	stateless.send([]byte(`{"id":1,"result":{}}`), true)
	rec = httptest.NewRecorder()
	if err := stateless.writeSSE(context.Background(), rec, 0, nil, false, true); err != nil {
		t.Fatal(err)
	}
	if body := rec.Body.String(); strings.Contains(body, "prime") || strings.Contains(body, "id:") {
		t.Errorf("an unnumbered stream was primed:\n%s", body)
	}
}

// Only clients of 2025-11-25 (which defines priming) or later are sent a
// priming event.
func TestPrimesByRevision(t *testing.T) {
	for version, want := range map[string]bool{"2025-11-25": true, "2026-07-28": true, "2025-06-18": false, "": false} {
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		if version != "" {
			r.Header.Set("Mcp-Protocol-Version", version)
		}
		if got := primes(r); got != want {
			t.Errorf("primes at %q = %v, want %v", version, got, want)
		}
	}
}
