package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/proxy/translate"
)

func TestOffers(t *testing.T) {
	for _, tc := range []struct {
		caps, what string
		want       bool
	}{
		{`{"tools":{}}`, "", false},
		{`{"tasks":{}}`, "", true},
		{`{"tasks":{}}`, "list", false},
		{`{"tasks":{"list":{},"cancel":{}}}`, "list", true},
		{`{"tasks":{"list":{}}}`, "cancel", false},
		{`not json`, "", false},
		{`{"tasks":null}`, "", false},
		{`{"tasks":{"list":null}}`, "list", false},
	} {
		if got := offers(json.RawMessage(tc.caps), tc.what); got != tc.want {
			t.Errorf("Offers(%s, %q) = %v, want %v", tc.caps, tc.what, got, tc.want)
		}
	}
}

func TestRequired(t *testing.T) {
	for tool, want := range map[string]bool{
		`{"name":"a"}`: false,
		`{"name":"a","execution":{"taskSupport":"optional"}}`: false,
		`{"name":"a","execution":{"taskSupport":"required"}}`: true,
		`{"name":"a","execution":"required"}`:                 false,
	} {
		if got := required(json.RawMessage(tool)); got != want {
			t.Errorf("Required(%s) = %v, want %v", tool, got, want)
		}
	}
}

func issue(id string) string { return "T-" + id }

func TestRewriteAndCreated(t *testing.T) {
	if got := string(RewriteID(json.RawMessage(`{"taskId":"7","status":"working"}`), issue)); got != `{"taskId":"T-7","status":"working"}` {
		t.Errorf("RewriteID = %s", got)
	}
	if got := string(RewriteID(json.RawMessage(`{"status":"working"}`), issue)); got != `{"status":"working"}` {
		t.Errorf("RewriteID without an id = %s", got)
	}
	res := json.RawMessage(`{"task":{"taskId":"7","status":"working"},"_meta":{"` + translate.RelatedTaskKey + `":{"taskId":"7"},"x":1}}`)
	out, id := Created(res, issue)
	if id != "7" {
		t.Errorf("Created's server id = %q, want 7", id)
	}
	var got struct {
		Task struct{ TaskID string }    `json:"task"`
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if got.Task.TaskID != "T-7" || string(got.Meta[translate.RelatedTaskKey]) != `{"taskId":"T-7"}` || string(got.Meta["x"]) != "1" {
		t.Errorf("Created = %s", out)
	}
	plain := json.RawMessage(`{"content":[]}`)
	if out, id := Created(plain, issue); id != "" || string(out) != string(plain) {
		t.Errorf("Created of a plain result = %s, %q", out, id)
	}
}

// pages is a server's tasks/list in pages; it records the cursors asked for.
type pages struct {
	results []string
	asked   []string
	err     error
}

func (p *pages) Call(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	p.asked = append(p.asked, method+" "+string(params))
	if len(p.asked) > len(p.results) {
		return nil, p.err
	}
	return json.RawMessage(p.results[len(p.asked)-1]), nil
}

func TestList(t *testing.T) {
	p := &pages{results: []string{`{"tasks":[{"taskId":"1"}],"nextCursor":"c"}`, `{"tasks":[{"taskId":"2"}]}`}}
	got, err := list(context.Background(), p)
	if err != nil || len(got) != 2 || string(got[1]) != `{"taskId":"2"}` {
		t.Fatalf("List = %s, %v", got, err)
	}
	if p.asked[1] != `tasks/list {"cursor":"c"}` {
		t.Errorf("second page asked as %q", p.asked[1])
	}
	bad := &pages{results: []string{`{"tasks":[{"taskId":"1"}],"nextCursor":"c"}`, `[]`}}
	if got, err := list(context.Background(), bad); err == nil || len(got) != 1 {
		t.Errorf("List of a bad page = %s, %v; want the first page and an error", got, err)
	}
}

func TestOwners(t *testing.T) {
	var o Owners[int]
	o.Own("a", "1", 10)
	o.Own("b", "1", 20)
	o.Own("a", "2", 10)
	if s, ok := o.Owner("b", "1"); !ok || s != 20 {
		t.Errorf("Owner(b, 1) = %v, %v", s, ok)
	}
	o.Forget(10)
	if _, ok := o.Owner("a", "2"); ok {
		t.Error("a forgotten session still owns a task")
	}
}

// server answers a driven task: the creation, then tasks/result, which
// blocks until ctx ends when block is set.
type server struct {
	block bool
	calls []string
}

func (s *server) Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	s.calls = append(s.calls, method+" "+string(params))
	if method == "tasks/result" && s.block {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return json.RawMessage(`{"content":[{"type":"text","text":"done"}],"_meta":{"` + translate.RelatedTaskKey + `":{"taskId":"9"}}}`), nil
}

func TestDrive(t *testing.T) {
	srv := &server{}
	var created json.RawMessage
	d := drive{Server: "s", Conn: srv, Create: func(_ context.Context, params json.RawMessage) (json.RawMessage, error) {
		created = params
		return json.RawMessage(`{"task":{"taskId":"9","status":"working"}}`), nil
	}}
	res, err := d.run(context.Background(), context.Background(), json.RawMessage(`{"name":"slow"}`))
	if err != nil {
		t.Fatal(err)
	}
	if string(created) != `{"name":"slow","task":{}}` {
		t.Errorf("created with %s, want a task member", created)
	}
	if strings.Contains(string(res), translate.RelatedTaskKey) || !strings.Contains(string(res), "done") {
		t.Errorf("result = %s: want the content without the server's related task", res)
	}
	if len(srv.calls) != 1 || srv.calls[0] != `tasks/result {"taskId":"9"}` {
		t.Errorf("server calls = %q", srv.calls)
	}
}

func TestDriveCancelled(t *testing.T) {
	srv := &server{block: true}
	var abandoned error
	d := drive{Server: "s", Conn: srv, Abandoned: func(err error) { abandoned = err },
		Create: func(context.Context, json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(`{"task":{"taskId":"9","status":"working"}}`), nil
		}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := d.run(ctx, context.Background(), json.RawMessage(`{"name":"slow"}`)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want the host's cancellation", err)
	}
	if len(srv.calls) != 2 || srv.calls[1] != `tasks/cancel {"taskId":"9"}` || abandoned != nil {
		t.Errorf("server calls = %q, abandoned = %v: want the task cancelled", srv.calls, abandoned)
	}
	noID := drive{Server: "s", Conn: srv, Create: func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"task":{"status":"working"}}`), nil
	}}
	if _, err := noID.run(context.Background(), context.Background(), json.RawMessage(`{}`)); err == nil || !strings.Contains(err.Error(), `"s"`) {
		t.Errorf("a task without an id: %v, want an error naming the server", err)
	}
}

// IDs lists one server's tasks of one session, in order: not another
// session's, not those of a server whose name begins the same.
func TestOwnersIDs(t *testing.T) {
	var o Owners[string]
	o.Own("s", "b", "x")
	o.Own("s", "a", "x")
	o.Own("s", "c", "y")
	o.Own("s2", "d", "x")
	if got := o.IDs("s", "x"); strings.Join(got, ",") != "a,b" {
		t.Errorf("IDs(s, x) = %q, want [a b]", got)
	}
	o.Forget("x")
	if got := o.IDs("s", "x"); len(got) != 0 {
		t.Errorf("after Forget: %q", got)
	}
}
