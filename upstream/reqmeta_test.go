package upstream

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/upstream/outgoing"
)

// recordingObserver is a outgoing.Observer that sets a traceparent of its
// own on each request and remembers what it was told.
type recordingObserver struct {
	mu   sync.Mutex
	seen []outgoing.Request
	ends []error
}

const trunkTraceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-1111111111111111-01"

func (o *recordingObserver) observe(_ context.Context, r outgoing.Request) (map[string]json.RawMessage, func(json.RawMessage, error)) {
	o.mu.Lock()
	o.seen = append(o.seen, r)
	o.mu.Unlock()
	return map[string]json.RawMessage{"traceparent": json.RawMessage(`"` + trunkTraceparent + `"`)}, func(res json.RawMessage, err error) {
		o.mu.Lock()
		defer o.mu.Unlock()
		if res == nil && err == nil {
			panic("end without a result or an error")
		}
		o.ends = append(o.ends, err)
	}
}

// hostParams carry the host's own traceparent, which must not reach the
// server, beside a key that must.
const hostParams = `{"name":%q,"arguments":{},"_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-2222222222222222-01","progressToken":7}}`

func checkTraced(t *testing.T, params json.RawMessage) {
	t.Helper()
	if got := rawjson.MetaString(params, "traceparent"); got != trunkTraceparent {
		t.Errorf("traceparent %q reached the server, want the trunk's %q: %s", got, trunkTraceparent, params)
	}
	if strings.Count(string(params), "traceparent") != 1 {
		t.Errorf("traceparent twice: %s", params)
	}
	if string(rawjson.MetaValue(params, "progressToken")) != "7" {
		t.Errorf("progressToken lost: %s", params)
	}
}

func (o *recordingObserver) check(t *testing.T, server, revision string) {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.seen) != 1 || len(o.ends) != 1 || o.ends[0] != nil {
		t.Fatalf("observer saw %+v, ends %v; want one tools/call ending well", o.seen, o.ends)
	}
	if r := o.seen[0]; r.Server != server || r.Method != "tools/call" || r.Revision != revision || r.Transport != "stdio" {
		t.Errorf("observer told %+v", r)
	}
}

// TestRequestMeta2025: at 2025-11-25 the observer hears of the request
// and its _meta keys replace the host's, the others passing.
func TestRequestMeta2025(t *testing.T) {
	h := newHarness(t)
	c := startReady(t, h, h.host(nil), h.spec("rev2025", modeNormal))
	o := &recordingObserver{}
	ctx := outgoing.WithObserver(ctxFor(t), o.observe)
	if _, err := c.Call(ctx, "tools/call", json.RawMessage(strings.Replace(hostParams, "%q", `"echo"`, 1))); err != nil {
		t.Fatal(err)
	}
	o.check(t, "rev2025", c.Init().ProtocolVersion) // what the test server answers
	var got json.RawMessage
	for _, m := range h.received("rev2025") {
		if m.Method == "tools/call" {
			got = m.Params
		}
	}
	checkTraced(t, got)
}

// TestRequestMetaStateless: at 2026-07-28 the keys go beside the
// revision's reserved ones.
func TestRequestMetaStateless(t *testing.T) {
	bin := conformanceServer(t)
	h := newHarness(t)
	c := startReady(t, h, h.host(nil), h.teeSpec("conf", bin))
	<-c.Settled()
	o := &recordingObserver{}
	ctx := outgoing.WithObserver(ctxFor(t), o.observe)
	if _, err := c.Call(ctx, "tools/call", json.RawMessage(strings.Replace(hostParams, "%q", `"test_simple_text"`, 1))); err != nil {
		t.Fatal(err)
	}
	o.check(t, "conf", protocol.Stateless)
	m, ok := lastCall(h.wireIn("conf"), "tools/call")
	if !ok {
		t.Fatal("no tools/call reached the server")
	}
	checkTraced(t, m.Params)
	if rawjson.MetaString(m.Params, protocol.MetaProtocolVersion) != protocol.Stateless {
		t.Errorf("the revision's _meta is gone: %s", m.Params)
	}
}

// TestNoObserverNoChange: without one, the host's _meta passes as it was.
func TestNoObserverNoChange(t *testing.T) {
	h := newHarness(t)
	c := startReady(t, h, h.host(nil), h.spec("plain", modeNormal))
	params := strings.Replace(hostParams, "%q", `"echo"`, 1)
	if _, err := c.Call(ctxFor(t), "tools/call", json.RawMessage(params)); err != nil {
		t.Fatal(err)
	}
	for _, m := range h.received("plain") {
		if m.Method == "tools/call" && !strings.Contains(string(m.Params), "2222222222222222") {
			t.Errorf("the host's traceparent did not pass: %s", m.Params)
		}
	}
}
