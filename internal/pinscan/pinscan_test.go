package pinscan

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/pin"
	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// servers is the config of the tests: "a" and "b" namespaced, "u"
// unprefixed, and "gone", which no in-memory server answers.
const servers = `{"mcpServers":{
	"a":{"command":"not-run"},
	"b":{"command":"not-run"},
	"u":{"command":"not-run","namespace":false},
	"gone":{"command":"not-run"}}}`

// appHTML is what the app of "b" reads as; a test changes it.
func appServer(html *string) *memserver.Server {
	s := &memserver.Server{
		Tools:     []json.RawMessage{memserver.Tool("fetch", "fetches a page")},
		Resources: []json.RawMessage{json.RawMessage(`{"uri":"ui://b/view","name":"view","mimeType":"text/html;profile=mcp-app"}`)},
	}
	s.Handle = func(_ context.Context, method string, _ json.RawMessage) (json.RawMessage, error) {
		if method != "resources/read" {
			return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "no %s", method)
		}
		return json.Marshal(map[string]any{"contents": []any{map[string]string{"uri": "ui://b/view", "mimeType": "text/html;profile=mcp-app", "text": *html}}})
	}
	return s
}

// scan runs Run over the config's servers named (every one when none is)
// against the lockfile at lockPath.
func scan(t *testing.T, set memserver.Set, lockPath string, names ...string) *Scan {
	t.Helper()
	cfg, err := config.Parse(strings.NewReader(servers), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	specs, err := config.Select(cfg.Servers, names)
	if err != nil {
		t.Fatal(err)
	}
	lock, err := pin.Read(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Run(ctx, cfg, specs, lock, Options{
		CacheDir: t.TempDir(),
		Dial: func(spec config.Spec, h jsonrpc.Handler) (upstream.Transport, error) {
			return set.Dial(spec, h)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func result(t *testing.T, s *Scan, id string) Result {
	t.Helper()
	i := slices.IndexFunc(s.Results, func(r Result) bool { return r.ID == id })
	if i < 0 {
		t.Fatalf("no result for %q in %+v", id, s.Results)
	}
	return s.Results[i]
}

// A first scan finds everything new, apps included, and a server that
// cannot connect failed; recorded, a second scan finds nothing; a changed
// description and changed app HTML are drift again. The failed server's
// entries are never written.
func TestRunRecordAndDrift(t *testing.T) {
	html := "<p>one</p>"
	a := &memserver.Server{Tools: []json.RawMessage{memserver.Tool("search", "searches")}}
	set := memserver.Set{"a": a, "b": appServer(&html), "u": {}}
	lockPath := filepath.Join(t.TempDir(), "mcptrunk.lock.json")

	first := scan(t, set, lockPath)
	if ids := []string{first.Results[0].ID, first.Results[1].ID, first.Results[2].ID, first.Results[3].ID}; !slices.Equal(ids, []string{"a", "b", "gone", "u"}) {
		t.Errorf("results not sorted by server: %v", ids)
	}
	if r := result(t, first, "gone"); r.State != upstream.StateFailed || r.Err == nil {
		t.Errorf("gone: %s, %v; want failed with its error", r.State, r.Err)
	}
	if r := result(t, first, "b"); len(r.Changes) != 3 || r.Now[pin.Apps]["ui://b/view"].SHA256 == "" {
		t.Errorf("b: changes %+v, apps %+v; want the tool, resource and app new", r.Changes, r.Now[pin.Apps])
	}
	var out bytes.Buffer
	drift, failed := first.Print(&out)
	if drift != 4 || failed != 1 {
		t.Errorf("Print: drift %d, failed %d; want 4 and 1\n%s", drift, failed, out.String())
	}
	for _, want := range []string{`server "gone": failed to connect: `, `server "a": 1 new, 0 changed, 0 removed`, `new tool "search"`, `server "u": matches the lockfile`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("Print does not say %q:\n%s", want, out.String())
		}
	}
	changed, err := first.Record(lockPath)
	if err != nil || !slices.Equal(changed, []string{"a", "b"}) {
		t.Fatalf("Record: %v, %v; want a and b", changed, err)
	}
	lock, _ := pin.Read(lockPath)
	if _, ok := lock.Servers["gone"]; ok {
		t.Error("a server that failed was written to the lockfile")
	}

	if again := scan(t, set, lockPath); len(result(t, again, "a").Changes)+len(result(t, again, "b").Changes) != 0 {
		t.Errorf("drift right after recording: %+v", again.Results)
	}
	a.Tools = []json.RawMessage{memserver.Tool("search", "searches, and then some")}
	html = "<p>two</p>"
	later := scan(t, set, lockPath, "a", "b")
	for _, id := range []string{"a", "b"} {
		if r := result(t, later, id); len(r.Changes) != 1 || r.Changes[0].Status != pin.Changed {
			t.Errorf("%s after a change: %+v; want one changed definition", id, r.Changes)
		}
	}
	if len(later.Results) != 2 {
		t.Errorf("scanned %d servers; want the two named", len(later.Results))
	}
}

// Others names the other servers' tools as a host sees them: a namespaced
// server's with its prefix, an unprefixed one's as they are, and those of
// a server not scanned from the lockfile; a server's own are not in its
// list.
func TestRunOthers(t *testing.T) {
	html := "<p>app</p>"
	set := memserver.Set{
		"a": {Tools: []json.RawMessage{memserver.Tool("search", "see also mcp__b__fetch")}},
		"b": appServer(&html),
		"u": {Tools: []json.RawMessage{memserver.Tool("lookup", "looks up")}},
	}
	lockPath := filepath.Join(t.TempDir(), "mcptrunk.lock.json")
	if _, err := scan(t, set, lockPath, "b").Record(lockPath); err != nil {
		t.Fatal(err)
	}
	s := scan(t, set, lockPath, "a", "u")
	others := s.Others["a"]
	for _, want := range []string{"mcp__b__fetch", "lookup"} {
		if !slices.Contains(others, want) {
			t.Errorf("others of a: %v; want %q", others, want)
		}
	}
	if slices.Contains(others, "mcp__a__search") || slices.Contains(others, "mcp__u__lookup") {
		t.Errorf("others of a: %v; want neither its own tool nor u's under a prefix", others)
	}
	var out bytes.Buffer
	s.Print(&out)
	if !strings.Contains(out.String(), `finding: tool "search"`) {
		t.Errorf("no finding for a description that names another server's tool:\n%s", out.String())
	}
}
