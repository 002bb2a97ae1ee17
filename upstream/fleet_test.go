package upstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
)

func TestStartAllMixedGoodAndBad(t *testing.T) {
	h := newHarness(t)
	clientCaps := `{"sampling":{},"roots":{"listChanged":true}}`
	host := h.host(&Options{Concurrency: 2, Capabilities: []byte(clientCaps)})

	hang := h.spec("hangs", modeHang)
	hang.Timeouts.Connect = config.Duration(400 * time.Millisecond)
	missing := h.spec("missing", modeNormal)
	missing.Command = filepath.Join(h.dir, "no-such-server")
	off := h.spec("off", modeNormal)
	off.Disabled = true
	specs := []config.Spec{
		h.spec("good-one", modeNormal),
		h.spec("exits", modeExit),
		hang,
		h.spec("good-two", modeNormal),
		missing,
		off,
		h.spec("tools-only", modeNormal, envCaps, "tools"),
	}

	began := time.Now()
	err := host.StartAll(ctxFor(t), specs)
	t.Logf("StartAll took %v", time.Since(began))

	// Settled is closed by the time StartAll returns.
	if !chanClosed(host.Settled()) {
		t.Error("Host.Settled is not closed after StartAll returned")
	}

	// The failures: exactly the bad servers, each saying why.
	failures := host.Failures()
	var failed []string
	for _, f := range failures {
		failed = append(failed, f.Server)
	}
	if want := []string{"exits", "hangs", "missing"}; !slices.Equal(failed, want) {
		t.Fatalf("Failures() = %v right after StartAll, want %v", failed, want)
	}
	if err == nil {
		t.Fatal("StartAll returned nil with three servers failing")
	}
	for _, f := range failures {
		if !errors.Is(err, f.Err) {
			t.Errorf("StartAll's error does not join the failure of %s (%v):\n%v", f.Server, f.Err, err)
		}
		if !strings.Contains(f.Err.Error(), fmt.Sprintf("server %q", f.Server)) {
			t.Errorf("the error of %s does not name it: %v", f.Server, f.Err)
		}
		c, _ := host.Client(f.Server)
		if state, serr := c.State(); state != StateFailed || serr != f.Err {
			t.Errorf("%s: State() = %s, %v; want failed with the error Failures reports", f.Server, state, serr)
		}
		if !chanClosed(c.Settled()) {
			t.Errorf("%s failed but is not settled", f.Server)
		}
		if got := c.Catalog(); got.Tools != nil || got.Prompts != nil {
			t.Errorf("%s failed but has a catalog: %+v", f.Server, got)
		}
	}
	exitErr := failures[0].Err.Error()
	for _, want := range []string{`server "exits": initialize: `, "exit status 7", "last stderr: starting the exit server\n" + `fatal: cannot open database "/nonexistent"`} {
		if !strings.Contains(exitErr, want) {
			t.Errorf("the error of the server that exited does not say %q:\n%s", want, exitErr)
		}
	}
	if got, want := failures[1].Err.Error(), `server "hangs": initialize: no answer within 400ms (timeouts.connect)`; got != want {
		t.Errorf("the error of the server that never answered is\n\t%s\nwant\n\t%s", got, want)
	}
	if !errors.Is(failures[2].Err, fs.ErrNotExist) || !strings.Contains(failures[2].Err.Error(), "no-such-server") {
		t.Errorf("the error of the missing command does not say it does not exist: %v", failures[2].Err)
	}

	// Every failure was reported as a change.
	for _, name := range failed {
		changes := h.rec.changesOf(name)
		if len(changes) == 0 || changes[len(changes)-1].state != StateFailed {
			t.Errorf("%s: no Changed event reported it failed (changes: %+v)", name, changes)
		}
	}

	// The good servers are ready with every page of every list they offer.
	full := normalCatalog()
	for _, name := range []string{"good-one", "good-two", "tools-only"} {
		c, ok := host.Client(name)
		if !ok {
			t.Fatalf("no client %s", name)
		}
		if state, err := c.State(); state != StateReady || err != nil {
			t.Errorf("%s: State() = %s, %v; want ready", name, state, err)
		}
		if !chanClosed(c.Settled()) {
			t.Errorf("%s is not settled after StartAll", name)
		}
		want := full
		if name == "tools-only" {
			want = Catalog{Tools: full.Tools}
		}
		checkCatalog(t, name, c.Catalog(), want)

		init := c.Init()
		wantCaps := Capabilities{Tools: true, Prompts: true, Resources: true, Subscribe: true, Logging: true}
		if name == "tools-only" {
			wantCaps = Capabilities{Tools: true, Logging: true}
		}
		if init.ProtocolVersion != "2025-06-18" || init.Capabilities != wantCaps ||
			string(init.ServerInfo) != testServerInfo || init.Instructions != testInstructions {
			t.Errorf("%s: Init() = %+v", name, init)
		}
		changes := h.rec.changesOf(name)
		if len(changes) == 0 || changes[0].state != StateReady {
			t.Errorf("%s: the first Changed event is not its becoming ready: %+v", name, changes)
		}

		// What the server was told in initialize.
		msgs := h.received(name)
		if len(msgs) < 2 || msgs[0].Method != "initialize" || msgs[1].Method != "notifications/initialized" {
			t.Fatalf("%s received %v first, want initialize then notifications/initialized", name, h.methods(name))
		}
		var p struct {
			ProtocolVersion string          `json:"protocolVersion"`
			Capabilities    json.RawMessage `json:"capabilities"`
			ClientInfo      struct {
				Name, Version string
			} `json:"clientInfo"`
		}
		if err := json.Unmarshal(msgs[0].Params, &p); err != nil {
			t.Fatal(err)
		}
		if p.ProtocolVersion != protocol.Version || string(p.Capabilities) != clientCaps ||
			p.ClientInfo.Name != "mcptrunk" || p.ClientInfo.Version != "9.9.9-test" {
			t.Errorf("%s: initialize params were %s", name, msgs[0].Params)
		}
	}

	// The disabled server is registered, settled and never started.
	c, ok := host.Client("off")
	if !ok {
		t.Fatal("the disabled server is not registered")
	}
	if state, err := c.State(); state != StateDisabled || err != nil {
		t.Errorf("disabled server: State() = %s, %v", state, err)
	}
	if !chanClosed(c.Settled()) {
		t.Error("the disabled server is not settled")
	}
	if h.fileExists("off.pid") {
		t.Error("the disabled server was started")
	}
	_, err = c.Call(ctxFor(t), "tools/call", nil)
	if rpcErr, ok := errors.AsType[*jsonrpc.Error](err); !ok || rpcErr.Code != jsonrpc.CodeUnavailable || !strings.Contains(rpcErr.Message, "disabled") {
		t.Errorf("calling the disabled server: %v, want an unavailable error saying it is disabled", err)
	}

	// The failed servers left no process behind; the good ones run until
	// Close and not after.
	if procfs {
		for _, name := range []string{"exits", "hangs"} {
			// A server killed for its connect timeout on a loaded machine
			// may never have written its pid: then there is nothing left
			// of it to find. It was killed before its failure was
			// reported, so no file comes later.
			if pid, ok := h.pidWritten(name, "pid"); ok && alive(pid) {
				t.Errorf("%s failed but its process %d still runs", name, pid)
			}
		}
		var pids []int
		for _, name := range []string{"good-one", "good-two", "tools-only"} {
			pid := h.pid(name, "pid")
			if !alive(pid) {
				t.Errorf("%s is ready but its process %d is gone", name, pid)
			}
			pids = append(pids, pid)
		}
		if err := host.Close(ctxFor(t)); err != nil {
			t.Errorf("Close: %v", err)
		}
		for _, pid := range pids {
			if alive(pid) {
				t.Errorf("process %d still runs after Close returned", pid)
			}
		}
	}
}

// With Concurrency 2, no more than two servers are ever between their start
// and the end of their first tool listing.
func TestStartAllRespectsConcurrency(t *testing.T) {
	h := newHarness(t)
	host := h.host(&Options{Concurrency: 2})
	const delay = 60 * time.Millisecond
	var specs []config.Spec
	for i := range 5 {
		specs = append(specs, h.spec(fmt.Sprintf("s%d", i), modeNormal, envCaps, "tools", envDelay, delay.String()))
	}
	began := time.Now()
	if err := host.StartAll(ctxFor(t), specs); err != nil {
		t.Fatal(err)
	}
	took := time.Since(began)

	inFlight, most := 0, 0
	log := h.sharedLog()
	for _, line := range log {
		switch {
		case strings.HasPrefix(line, "start "):
			inFlight++
		case strings.HasPrefix(line, "done "):
			inFlight--
		}
		most = max(most, inFlight)
	}
	t.Logf("StartAll took %v; at most %d servers starting at once; log %q", took, most, log)
	if most > 2 {
		t.Errorf("%d servers were starting at once, want at most 2; log %q", most, log)
	}
	// Five starts of at least delay each, two at a time: three rounds.
	if took < 3*delay {
		t.Errorf("StartAll took %v, less than the %v five starts two at a time need", took, 3*delay)
	}
	for _, c := range host.Clients() {
		if state, err := c.State(); state != StateReady {
			t.Errorf("%s: %s, %v", c.Name(), state, err)
		}
	}
}

// Phase B runs in the background: Add returns once the tools are listed,
// and the prompts, resources and templates arrive later, with a Changed
// event and Settled closing.
func TestPhaseBArrivesInTheBackground(t *testing.T) {
	h := newHarness(t)
	host := h.host(nil)
	if err := host.Add(ctxFor(t), h.spec("later", modeNormal, envHoldB, "1")); err != nil {
		t.Fatal(err)
	}
	c, _ := host.Client("later")
	if state, _ := c.State(); state != StateReady {
		t.Fatalf("state %s after Add", state)
	}
	full := normalCatalog()
	checkCatalog(t, "later", c.Catalog(), Catalog{Tools: full.Tools})
	if chanClosed(c.Settled()) {
		t.Error("settled while prompts/list is still unanswered")
	}

	h.release("later")
	awaitClosed(t, c.Settled(), "phase B to finish")
	checkCatalog(t, "later", c.Catalog(), full)
	changes := h.rec.changesOf("later")
	if len(changes) < 2 {
		t.Fatalf("%d Changed events, want one for ready and one for phase B", len(changes))
	}
	checkCatalog(t, "later (first Changed)", changes[0].catalog, Catalog{Tools: full.Tools})
	last := changes[len(changes)-1]
	if last.state != StateReady {
		t.Errorf("the last Changed event saw state %s", last.state)
	}
	checkCatalog(t, "later (last Changed)", last.catalog, full)
}

// Capabilities gate discovery: a list the server did not declare is never
// asked for.
func TestCapabilitiesGateDiscovery(t *testing.T) {
	lists := func(method string) []string { return []string{method, method, method} }
	cases := []struct {
		caps    string
		methods []string
	}{
		{"tools,prompts,resources", slices.Concat(lists("tools/list"), lists("prompts/list"), lists("resources/list"), lists("resources/templates/list"))},
		{"tools", lists("tools/list")},
		{"prompts", lists("prompts/list")},
		{"resources", slices.Concat(lists("resources/list"), lists("resources/templates/list"))},
		{"", nil},
	}
	for _, tc := range cases {
		t.Run("caps="+tc.caps, func(t *testing.T) {
			h := newHarness(t)
			host := h.host(nil)
			if err := host.StartAll(ctxFor(t), []config.Spec{h.spec("srv", modeNormal, envCaps, tc.caps)}); err != nil {
				t.Fatal(err)
			}
			c, _ := host.Client("srv")
			full := normalCatalog()
			var want Catalog
			for _, m := range tc.methods {
				switch m {
				case "tools/list":
					want.Tools = full.Tools
				case "prompts/list":
					want.Prompts = full.Prompts
				case "resources/list":
					want.Resources, want.Templates = full.Resources, full.Templates
				}
			}
			checkCatalog(t, "srv", c.Catalog(), want)
			if err := host.Close(ctxFor(t)); err != nil {
				t.Fatal(err)
			}
			got := h.methods("srv")
			wantMethods := append([]string{"initialize", "notifications/initialized"}, tc.methods...)
			if !slices.Equal(got, wantMethods) {
				t.Errorf("the server received\n\t%v\nwant\n\t%v", got, wantMethods)
			}
		})
	}
}

// listOps returns how many times the server was asked for its tool list
// from the first page, and at which positions among everything it received.
func listOps(msgs []wireMessage) []int {
	var at []int
	for i, m := range msgs {
		if m.Method == "tools/list" && !bytes.Contains(m.Params, []byte("cursor")) {
			at = append(at, i)
		}
	}
	return at
}

func versionedTools(version int) []Item {
	return []Item{
		{Key: fmt.Sprintf("v%d-one", version), Raw: json.RawMessage(versionedTool(version, "one"))},
		{Key: fmt.Sprintf("v%d-two", version), Raw: json.RawMessage(versionedTool(version, "two"))},
	}
}

// A burst of tools/list_changed costs one or two reads of the list, not
// one per notification, and the catalog ends as the server's final list.
func TestListChangedBurst(t *testing.T) {
	h := newHarness(t)
	host := h.host(nil)
	if err := host.StartAll(ctxFor(t), []config.Spec{h.spec("bursty", modeBurstInit)}); err != nil {
		t.Fatal(err)
	}
	c, _ := host.Client("bursty")
	// The burst right after initialized came before the first listing was
	// answered: the list StartAll ends with is already the final one.
	if d := diffItems(c.Catalog().Tools, versionedTools(5)); d != "" {
		t.Fatalf("after the burst at start: %s", d)
	}
	startOps := len(listOps(h.received("bursty")))
	changesBefore := len(h.rec.changesOf("bursty"))

	// A burst while ready: five notifications, each after a change.
	if _, err := c.Call(ctxFor(t), "tools/call", json.RawMessage(`{"name":"burst"}`)); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, "the catalog to show version 10", func() bool {
		return diffItems(c.Catalog().Tools, versionedTools(10)) == ""
	})
	// The event follows the catalog update.
	pollUntil(t, "a Changed event showing version 10", func() bool {
		changes := h.rec.changesOf("bursty")[changesBefore:]
		return len(changes) > 0 && diffItems(changes[len(changes)-1].catalog.Tools, versionedTools(10)) == ""
	})
	if err := host.Close(ctxFor(t)); err != nil {
		t.Fatal(err)
	}

	msgs := h.received("bursty")
	ops := listOps(msgs)
	callAt := slices.IndexFunc(msgs, func(m wireMessage) bool { return m.Method == "tools/call" })
	after := 0
	for _, i := range ops {
		if i > callAt {
			after++
		}
	}
	t.Logf("tool listings: %d at start, %d after the burst of 5", startOps, after)
	// At start: phase A, plus at most one more for the notifications that
	// arrived while it ran. While ready: the first notification starts a
	// read; the other four, all read before that read's answer, cost at
	// most one more.
	if startOps < 1 || startOps > 2 {
		t.Errorf("%d tool listings at start, want 1 or 2", startOps)
	}
	if after < 1 || after > 2 {
		t.Errorf("%d tool listings after a burst of 5 notifications, want 1 or 2", after)
	}
}

// A list that changes while the client is reading it at start must not
// leave the catalog stale: the notifications that arrived during discovery
// are acted on once the server is ready.
func TestListChangedDuringDiscovery(t *testing.T) {
	h := newHarness(t)
	host := h.host(nil)
	if err := host.StartAll(ctxFor(t), []config.Spec{h.spec("racy", modeBurstList)}); err != nil {
		t.Fatal(err)
	}
	c, _ := host.Client("racy")
	pollUntil(t, "the catalog to become the server's final list", func() bool {
		return diffItems(c.Catalog().Tools, versionedTools(5)) == ""
	})
	if err := host.Close(ctxFor(t)); err != nil {
		t.Fatal(err)
	}
	if ops := len(listOps(h.received("racy"))); ops > 2 {
		t.Errorf("%d tool listings, want at most 2", ops)
	}
}

// Close while StartAll still waits for a server that never answers (with a
// long connect timeout) returns promptly, ends StartAll, and leaves no
// process behind, including of a server that was still queued.
func TestFleetCloseDuringStartAll(t *testing.T) {
	h := newHarness(t)
	host := h.host(&Options{Concurrency: 1})
	hang := h.spec("hangs", modeHang)
	hang.Timeouts.Connect = config.Duration(time.Minute)
	queued := h.spec("queued", modeNormal)

	startErr := make(chan error, 1)
	go func() { startErr <- host.StartAll(ctxFor(t), []config.Spec{hang, queued}) }()
	pid := h.pid("hangs", "pid")
	pollUntil(t, "the server to receive initialize", func() bool { return len(h.received("hangs")) > 0 })

	began := time.Now()
	if err := host.Close(ctxFor(t)); err != nil {
		t.Errorf("Close: %v", err)
	}
	took := time.Since(began)
	t.Logf("Close took %v", took)
	if took > slack {
		t.Errorf("Close took %v while a start was in progress", took)
	}
	select {
	case err := <-startErr:
		if err == nil || !strings.Contains(err.Error(), `server "hangs"`) {
			t.Errorf("StartAll returned %v, want the interrupted start of hangs", err)
		}
	case <-time.After(slack):
		t.Fatal("StartAll still runs 2s after Close returned")
	}
	if alive(pid) {
		t.Errorf("the hanging server (pid %d) still runs after Close", pid)
	}
	h.checkNoProcesses("after Close")
	for _, c := range host.Clients() {
		if state, _ := c.State(); state != StateClosed {
			t.Errorf("%s is %s after Close", c.Name(), state)
		}
	}
	if !chanClosed(host.Settled()) {
		t.Error("Settled is not closed after StartAll returned")
	}
	if h.fileExists("queued.pid") {
		t.Error("the server queued behind the hanging one was started after Close")
	}
}

func TestFleetAddRemove(t *testing.T) {
	h := newHarness(t)
	host := h.host(nil)
	ctx := ctxFor(t)
	if err := host.Add(ctx, h.spec("one", modeNormal, envCaps, "tools")); err != nil {
		t.Fatal(err)
	}
	if err := host.Add(ctx, h.spec("one", modeNormal)); err == nil || !strings.Contains(err.Error(), "collides") {
		t.Errorf("adding a second server called one: %v, want a collision", err)
	}
	if err := host.Add(ctx, h.spec("a__b", modeNormal)); err == nil {
		t.Error("adding a server whose name holds the separator succeeded")
	}
	pid := h.pid("one", "pid")
	if err := host.Remove(ctx, "one"); err != nil {
		t.Fatal(err)
	}
	if alive(pid) {
		t.Errorf("removed server %d still runs", pid)
	}
	if _, ok := host.Client("one"); ok {
		t.Error("the removed server is still listed")
	}
	if changes := h.rec.changesOf("one"); len(changes) == 0 || changes[len(changes)-1].state != "removed" {
		t.Errorf("no Changed event after Remove: %+v", changes)
	}
	if err := host.Remove(ctx, "one"); err == nil {
		t.Error("removing it again succeeded")
	}
	if err := host.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := host.Add(ctx, h.spec("two", modeNormal)); err == nil || !strings.Contains(err.Error(), "shutting down") {
		t.Errorf("Add after Close: %v", err)
	}
	if h.fileExists("two.pid") {
		t.Error("Add after Close started the server")
	}
}

// TestStartFailureQuotesStdout: a server that writes text that is not
// JSON-RPC to stdout and never answers fails with that line in its error
// (clipped, the values of its environment blanked out, in the log too),
// not only "no answer".
func TestStartFailureQuotesStdout(t *testing.T) {
	h := newHarness(t)
	host := h.host(nil)
	const secret = "s3cr3t-t0ken-value"
	chatty := h.spec("chatty", modeHang, envBanner, "hello not json (key $API_KEY)", "API_KEY", secret)
	// The timeout is the wait, so it is long enough for the process to
	// start and write its banner on a loaded machine (at 400 ms it once
	// had not yet, and the error quoted no line).
	chatty.Timeouts.Connect = config.Duration(3 * time.Second)
	_ = host.StartAll(ctxFor(t), []config.Spec{chatty})
	failures := host.Failures()
	if len(failures) != 1 {
		t.Fatalf("failures: %+v", failures)
	}
	want := `server "chatty": initialize: no answer within 3s (timeouts.connect); it wrote a line that is not JSON-RPC: "hello not json (key [redacted])"`
	if got := failures[0].Err.Error(); got != want {
		t.Errorf("the error is\n\t%s\nwant\n\t%s", got, want)
	}
	if log := h.log.String(); strings.Contains(log, secret) || !strings.Contains(log, "hello not json (key [redacted])") {
		t.Errorf("the log quotes the line without its secret blanked, or not at all:\n%s", log)
	}
}
