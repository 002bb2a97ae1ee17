package proxy

// The caller's view on every path, enumerated: every method the trunk
// answers and every notification it forwards is read from the code (the
// switches that dispatch them), and each must have a case here that tries
// it with an item the caller may see and one it may not, at 2025-11-25 (a
// session) and at 2026-07-28 (stateless requests). What is hidden must be
// refused, or absent, exactly as what does not exist. A method or a
// notification added without a case fails TestViewEveryMethodHasACase.

import (
	"context"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
	"github.com/mcptrunk/mcptrunk/proxy/skills"
	"github.com/mcptrunk/mcptrunk/proxy/tasks"
)

// dispatchers are the functions whose switches (and method == X tests)
// decide which requests the trunk answers; forwarders, which
// notifications of a server's it passes on ("*": the default, any other).
var (
	dispatchers = map[string][]string{
		"route.go":   {"handle"},
		"session.go": {"HandleRequest", "handle", "request2025"},
		"shared.go":  {"handleShared"},
	}
	forwarders = map[string][]string{"forward.go": {"forwardNotification", "toHosts"}, "private.go": {"toSession"}}
	// constants the switches name, by their spelling there.
	methodConsts = map[string]string{
		"skills.GetMethod": skills.GetMethod, "skills.DirReadMethod": skills.DirReadMethod, "skills.ListMethod": skills.ListMethod,
		"protocol.MethodDiscover": protocol.MethodDiscover, "protocol.MethodListen": protocol.MethodListen,
		"tasks.StatusMethod": tasks.StatusMethod, "tasks.NotificationMethod": tasks.NotificationMethod,
	}
)

// switchedMethods reads, from the functions named in files, every method
// a case of a switch or a comparison with the variable method names; a
// switch on method with a default adds "*".
func switchedMethods(t *testing.T, files map[string][]string) []string {
	t.Helper()
	value := func(e ast.Expr) string {
		switch e := e.(type) {
		case *ast.BasicLit:
			if s, err := strconv.Unquote(e.Value); err == nil {
				return s
			}
		case *ast.SelectorExpr:
			if x, ok := e.X.(*ast.Ident); ok {
				if v, ok := methodConsts[x.Name+"."+e.Sel.Name]; ok {
					return v
				}
				t.Fatalf("a dispatch names %s.%s: add its value to methodConsts", x.Name, e.Sel.Name)
			}
		}
		t.Fatalf("a dispatch names a method by %T: teach switchedMethods to read it", e)
		return ""
	}
	isMethod := func(e ast.Expr) bool { id, ok := e.(*ast.Ident); return ok && id.Name == "method" }
	seen := map[string]bool{}
	fset := token.NewFileSet()
	for file, funcs := range files {
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		found := 0
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || !slices.Contains(funcs, fn.Name.Name) {
				continue
			}
			found++
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.SwitchStmt:
					if !isMethod(n.Tag) {
						return true
					}
					for _, c := range n.Body.List {
						cc := c.(*ast.CaseClause)
						if cc.List == nil {
							seen["*"] = true
						}
						for _, e := range cc.List {
							seen[value(e)] = true
						}
					}
				case *ast.BinaryExpr:
					if n.Op == token.EQL && isMethod(n.X) {
						seen[value(n.Y)] = true
					}
				}
				return true
			})
		}
		if found != len(funcs) {
			t.Fatalf("%s: found %d of the functions %v: the dispatch moved, update dispatchers or forwarders", file, found, funcs)
		}
	}
	delete(seen, "*") // a request's default is "not supported": no path
	if files["forward.go"] != nil {
		seen["*"] = true // toHosts passes any other notification on
	}
	return slices.Sorted(func(yield func(string) bool) {
		for m := range seen {
			if !yield(m) {
				return
			}
		}
	})
}

// enumServer is a 2025-11-25 server with one item of each kind, named
// after p (p_tool, p_prompt, p://doc, p://t/{x}, skill p-skill; each
// tools/call with a task member makes task p-task-N) and an extension of
// its own (io.example/p). Its tool p_notify sends every notification a
// server may send, each naming p (the status of every task it made
// included), before it answers.
func enumServer(p string) *memserver.Server {
	task := func(id string) string {
		return `{"taskId":"` + id + `","status":"working","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttl":60000,"pollInterval":10}`
	}
	var (
		mu      sync.Mutex
		created []string // the tasks' ids, p-task-1, p-task-2, ...
	)
	tasksNow := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(created)
	}
	skill := `{"uri":"skill://` + p + `-skill/SKILL.md","frontmatter":{"name":"` + p + `-skill","description":"d"},"resources":[]}`
	s := &memserver.Server{
		Capabilities: json.RawMessage(`{"tools":{"listChanged":true},"prompts":{"listChanged":true},"resources":{"listChanged":true,"subscribe":true},"logging":{},"completions":{},` +
			`"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}},"extensions":{"io.modelcontextprotocol/skills":{"directoryRead":true},"io.example/` + p + `":{}}}`),
		Tools:     []json.RawMessage{memserver.Tool(p+"_tool", "t"), memserver.Tool(p+"_notify", "notifies")},
		Prompts:   []json.RawMessage{json.RawMessage(`{"name":"` + p + `_prompt","arguments":[{"name":"a"}]}`)},
		Resources: []json.RawMessage{json.RawMessage(`{"uri":"` + p + `://doc","name":"doc"}`)},
		Templates: []json.RawMessage{json.RawMessage(`{"uriTemplate":"` + p + `://t/{x}","name":"t"}`)},
	}
	s.Handle = func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		switch method {
		case "tools/call":
			if rawjson.HasField(params, "task") {
				mu.Lock()
				created = append(created, p+"-task-"+strconv.Itoa(len(created)+1))
				id := created[len(created)-1]
				mu.Unlock()
				return json.RawMessage(`{"task":` + task(id) + `}`), nil
			}
			if name, _ := rawjson.StringField(params, "name"); name == p+"_notify" {
				token := getRaw(getRaw(params, "_meta"), "progressToken")
				if token == nil {
					token = json.RawMessage(`"none"`)
				}
				c := s.Conn()
				notes := []struct{ method, params string }{
					{"notifications/progress", `{"progressToken":` + string(token) + `,"progress":1,"message":"` + p + `"}`},
					{"notifications/message", `{"level":"error","logger":"` + p + `","data":"` + p + `"}`},
					{"notifications/resources/updated", `{"uri":"` + p + `://doc"}`},
					{"notifications/" + p + "/custom", `{"from":"` + p + `"}`},
				}
				for _, id := range tasksNow() {
					notes = append(notes, struct{ method, params string }{tasks.StatusMethod, task(id)},
						struct{ method, params string }{tasks.NotificationMethod, `{"taskId":"` + id + `","status":"working"}`})
				}
				for _, n := range notes {
					if err := c.Notify(n.method, json.RawMessage(n.params)); err != nil {
						return nil, err
					}
				}
			}
			return memserver.Text(p), nil
		case "prompts/get":
			return json.RawMessage(`{"messages":[]}`), nil
		case "resources/read":
			return json.RawMessage(`{"contents":[{"uri":"` + p + `://doc","text":"t"}]}`), nil
		case "completion/complete":
			return json.RawMessage(`{"completion":{"values":["v"]}}`), nil
		case "resources/subscribe", "resources/unsubscribe", "logging/setLevel":
			return json.RawMessage(`{}`), nil
		case skills.ListMethod:
			return json.RawMessage(`{"skills":[` + skill + `]}`), nil
		case skills.GetMethod:
			return json.RawMessage(`{"skill":` + skill + `}`), nil
		case skills.DirReadMethod:
			return json.RawMessage(`{"resources":[]}`), nil
		case "tasks/get", "tasks/cancel", "tasks/update":
			id, _ := rawjson.StringField(params, "taskId")
			return json.RawMessage(task(id)), nil
		case "tasks/list":
			var all []string
			for _, id := range tasksNow() {
				all = append(all, task(id))
			}
			return json.RawMessage(`{"tasks":[` + strings.Join(all, ",") + `]}`), nil
		case "tasks/result":
			id, _ := rawjson.StringField(params, "taskId")
			return json.RawMessage(`{"content":[{"type":"text","text":"` + p + `"}],"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"` + id + `"}}}`), nil
		}
		return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "no %s", method)
	}
	return s
}

// enumWorld is a shared trunk serving "open" and "hidden" (enumServer)
// to alice, an admin who sees both, and to bob, who sees open alone:
// bob2025 is his 2025-11-25 session, bobNow his stateless requests.
type enumWorld struct {
	tr                     *Trunk
	set                    memserver.Set
	alice, bob2025, bobNow *memHost
	aliceTask, bobTask     string // the trunk's ids of tasks alice created on hidden, and bob on open
	bobNowTask             string // and bob's, at the stateless revision
}

// enumMeta is the _meta of a 2026-07-28 request that declares the
// tasks extension and elicitation, at log level debug.
const enumMeta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"extensions":{"` + tasks.Extension + `":{}}},"io.modelcontextprotocol/logLevel":"debug"}`

func newEnumWorld(t *testing.T) *enumWorld {
	set := memserver.Set{"open": enumServer("open"), "hidden": enumServer("hidden")}
	tr, _ := memTrunk(t, set, nil, map[string]any{"policy": map[string]any{"rules": []map[string]string{
		{"allow": `"admin" in claims.?groups.orValue([])`},
		{"allow": `"support" in claims.?groups.orValue([]) && server == "open"`},
	}}}, nil)
	tr.Share()
	attach := func(id, subject, group string) *memHost {
		return &memHost{pipeHost: attachPipes(t, tr, &SessionOptions{ID: id, Subject: subject, Claims: map[string]any{"sub": subject, "groups": []any{group}}})}
	}
	w := &enumWorld{tr: tr, set: set, alice: attach("a", "alice", "admin"), bob2025: attach("b", "bob", "support"), bobNow: attach("b2", "bob", "support")}
	w.alice.initialize(`{}`)
	w.bob2025.initialize(`{}`)
	w.alice.tools() // the servers are up
	w.aliceTask = createdTask(t, w.alice, "mcp__hidden__hidden_tool", "")
	w.bobTask = createdTask(t, w.bob2025, "mcp__open__open_tool", "")
	w.bobNowTask = createdTask(t, w.bobNow, "mcp__open__open_tool", enumMeta)
	return w
}

// createdTask calls tool as a task (at the revision meta says) and
// returns the trunk's task id.
func createdTask(t *testing.T, h *memHost, tool, meta string) string {
	t.Helper()
	res, errObj := h.call("tools/call", withMeta(`{"name":"`+tool+`","arguments":{},"task":{"ttl":60000}}`, meta))
	id, _ := rawjson.StringField(getRaw(res, "task"), "taskId")
	if id == "" {
		t.Fatalf("%s as a task: %s %s", tool, res, errObj)
	}
	return id
}

func getRaw(obj json.RawMessage, key string) json.RawMessage {
	start, end, found, err := rawjson.FieldSpan(obj, key)
	if err != nil || !found {
		return nil
	}
	return obj[start:end]
}

// withMeta adds meta's members to params' _meta (made when absent),
// when meta is not "".
func withMeta(params, meta string) string {
	if meta == "" {
		return params
	}
	if own := getRaw(json.RawMessage(params), "_meta"); own != nil {
		merged := strings.TrimSuffix(string(own), "}") + "," + strings.TrimPrefix(meta, "{")
		out, err := rawjson.ReplaceField(json.RawMessage(params), "_meta", json.RawMessage(merged))
		if err != nil {
			panic(err)
		}
		return string(out)
	}
	if strings.TrimSpace(params) == "{}" {
		return `{"_meta":` + meta + `}`
	}
	return strings.TrimSuffix(params, "}") + `,"_meta":` + meta + `}`
}

// revision is one side of the enumeration: bob's host at one revision.
type revision struct {
	name string
	h    *memHost
	meta string // the _meta each request carries ("" at 2025-11-25)
}

func (w *enumWorld) revisions() []revision {
	return []revision{{"2025-11-25", w.bob2025, ""}, {"2026-07-28", w.bobNow, enumMeta}}
}

// call sends bob's request at rev.
func (rev revision) call(method, params string) (json.RawMessage, json.RawMessage) {
	return rev.h.call(method, withMeta(params, rev.meta))
}

// sameAnswer checks that bob's request of a hidden item is answered as
// the same request of a missing one (the names swapped), and never
// reaches the hidden server.
func (w *enumWorld) sameAnswer(t *testing.T, rev revision, method, params, hidden, missing string) {
	t.Helper()
	before := len(w.set["hidden"].Received())
	hr, he := rev.call(method, params)
	mr, me := rev.call(method, strings.ReplaceAll(params, hidden, missing))
	if got, want := strings.ReplaceAll(string(hr)+string(he), hidden, missing), string(mr)+string(me); got != want {
		t.Errorf("%s %s of hidden %s: %s%s; of missing %s: %s%s", rev.name, method, hidden, hr, he, missing, mr, me)
	}
	if he == nil && hr == nil {
		t.Errorf("%s %s of hidden %s: no answer", rev.name, method, hidden)
	}
	if after := w.set["hidden"].Received(); len(after) != before {
		t.Errorf("%s %s: the hidden server got %v", rev.name, method, after[before:])
	}
}

// works checks that bob's request of a visible item is answered with a result.
func works(t *testing.T, rev revision, method, params string) json.RawMessage {
	t.Helper()
	res, errObj := rev.call(method, params)
	if res == nil {
		t.Errorf("%s %s %s: %s, want a result", rev.name, method, params, errObj)
	}
	return res
}

// listShows checks a list of bob's: open's item in it, hidden's not.
func listShows(t *testing.T, rev revision, method, open, hidden string) {
	t.Helper()
	res := works(t, rev, method, `{}`)
	if !strings.Contains(string(res), open) || strings.Contains(string(res), hidden) {
		t.Errorf("%s %s: %s, want %s and not %s", rev.name, method, res, open, hidden)
	}
}

// methodCases tries each method for bob with a hidden and a visible item.
var methodCases = map[string]func(t *testing.T, w *enumWorld, rev revision){
	"tools/list": func(t *testing.T, w *enumWorld, rev revision) {
		listShows(t, rev, "tools/list", "mcp__open__open_tool", "hidden")
	},
	"prompts/list": func(t *testing.T, w *enumWorld, rev revision) {
		listShows(t, rev, "prompts/list", "mcp__open__open_prompt", "hidden")
	},
	"resources/list": func(t *testing.T, w *enumWorld, rev revision) {
		listShows(t, rev, "resources/list", "mcptrunk://open/open://doc", "hidden")
	},
	"resources/templates/list": func(t *testing.T, w *enumWorld, rev revision) {
		listShows(t, rev, "resources/templates/list", "mcptrunk://open/open://t/{x}", "hidden")
	},
	"tools/call": func(t *testing.T, w *enumWorld, rev revision) {
		w.sameAnswer(t, rev, "tools/call", `{"name":"mcp__hidden__hidden_tool","arguments":{}}`, "hidden_tool", "hidden_tooz")
		w.sameAnswer(t, rev, "tools/call", `{"name":"hidden_tool","arguments":{}}`, "hidden_tool", "hidden_tooz") // an app's bare name
		works(t, rev, "tools/call", `{"name":"mcp__open__open_tool","arguments":{}}`)
	},
	"prompts/get": func(t *testing.T, w *enumWorld, rev revision) {
		w.sameAnswer(t, rev, "prompts/get", `{"name":"mcp__hidden__hidden_prompt"}`, "hidden_prompt", "hidden_prompz")
		works(t, rev, "prompts/get", `{"name":"mcp__open__open_prompt"}`)
	},
	"resources/read": func(t *testing.T, w *enumWorld, rev revision) {
		w.sameAnswer(t, rev, "resources/read", `{"uri":"mcptrunk://hidden/hidden://doc"}`, "hidden://doc", "hidden://dox")
		w.sameAnswer(t, rev, "resources/read", `{"uri":"mcptrunk://hidden/hidden://t/1"}`, "hidden://t/1", "hidden://x/1")
		works(t, rev, "resources/read", `{"uri":"mcptrunk://open/open://t/1"}`)
	},
	skills.GetMethod: func(t *testing.T, w *enumWorld, rev revision) {
		w.sameAnswer(t, rev, skills.GetMethod, `{"uri":"skill://hidden/hidden-skill/SKILL.md"}`, "hidden-skill", "hidden-skilz")
		works(t, rev, skills.GetMethod, `{"uri":"skill://open/open-skill/SKILL.md"}`)
	},
	skills.DirReadMethod: func(t *testing.T, w *enumWorld, rev revision) {
		w.sameAnswer(t, rev, skills.DirReadMethod, `{"uri":"skill://hidden/hidden-skill/"}`, "hidden-skill", "hidden-skilz")
		works(t, rev, skills.DirReadMethod, `{"uri":"skill://open/open-skill/"}`)
	},
	skills.ListMethod: func(t *testing.T, w *enumWorld, rev revision) {
		listShows(t, rev, skills.ListMethod, "open-skill", "hidden")
	},
	"resources/subscribe": func(t *testing.T, w *enumWorld, rev revision) {
		// alice holds the hidden URI first: bob is asked all the same.
		if res, errObj := w.alice.call("resources/subscribe", `{"uri":"mcptrunk://hidden/hidden://doc"}`); res == nil {
			t.Fatalf("alice subscribing: %s", errObj)
		}
		w.sameAnswer(t, rev, "resources/subscribe", `{"uri":"mcptrunk://hidden/hidden://doc"}`, "hidden://doc", "hidden://dox")
		if rev.meta == "" {
			works(t, rev, "resources/subscribe", `{"uri":"mcptrunk://open/open://doc"}`)
		}
	},
	"resources/unsubscribe": func(t *testing.T, w *enumWorld, rev revision) {
		w.sameAnswer(t, rev, "resources/unsubscribe", `{"uri":"mcptrunk://hidden/hidden://doc"}`, "hidden://doc", "hidden://dox")
		if rev.meta == "" {
			works(t, rev, "resources/unsubscribe", `{"uri":"mcptrunk://open/open://doc"}`)
		}
	},
	protocol.MethodListen: func(t *testing.T, w *enumWorld, rev revision) {
		if rev.meta == "" {
			// Not a method at 2025-11-25: one answer, whatever it names.
			w.sameAnswer(t, rev, protocol.MethodListen, `{"notifications":{"resourceSubscriptions":["mcptrunk://hidden/hidden://doc"]}}`, "hidden://doc", "hidden://dox")
			return
		}
		// A listen is answered only when it ends: its acknowledgement says
		// what it honoured, the hidden URI not, as the missing one not.
		rev.h.send(`{"jsonrpc":"2.0","id":"listen","method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":["mcptrunk://hidden/hidden://doc","mcptrunk://hidden/hidden://dox","mcptrunk://open/open://doc"]},"_meta":` + enumMeta + `}}`)
		ack := string(rev.h.waitFor(protocol.NotificationAcknowledged))
		if !strings.Contains(ack, "mcptrunk://open/open://doc") || strings.Contains(ack, "hidden") {
			t.Errorf("%s: the listen honoured %s, want open's URI alone", rev.name, ack)
		}
		rev.h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"listen"}}`)
	},
	"completion/complete": func(t *testing.T, w *enumWorld, rev revision) {
		w.sameAnswer(t, rev, "completion/complete", `{"ref":{"type":"ref/prompt","name":"mcp__hidden__hidden_prompt"},"argument":{"name":"a","value":""}}`, "hidden_prompt", "hidden_prompz")
		w.sameAnswer(t, rev, "completion/complete", `{"ref":{"type":"ref/resource","uri":"mcptrunk://hidden/hidden://t/{x}"},"argument":{"name":"x","value":""}}`, "hidden://t/", "hidden://x/")
		works(t, rev, "completion/complete", `{"ref":{"type":"ref/prompt","name":"mcp__open__open_prompt"},"argument":{"name":"a","value":""}}`)
	},
	"tasks/get":    taskCase("tasks/get"),
	"tasks/cancel": taskCase("tasks/cancel"),
	"tasks/result": taskCase("tasks/result"),
	"tasks/update": taskCase("tasks/update"),
	"tasks/list": func(t *testing.T, w *enumWorld, rev revision) {
		res, errObj := rev.call("tasks/list", `{}`)
		if rev.meta != "" {
			if res != nil || !strings.Contains(string(errObj), "-32601") {
				t.Errorf("%s tasks/list: %s %s, want -32601 (removed)", rev.name, res, errObj)
			}
			return
		}
		if !strings.Contains(string(res), w.bobTask) || strings.Contains(string(res), w.aliceTask) || strings.Contains(string(res), "hidden") {
			t.Errorf("%s tasks/list: %s %s, want bob's task and not alice's", rev.name, res, errObj)
		}
	},
	"logging/setLevel": func(t *testing.T, w *enumWorld, rev revision) {
		// No item: every caller gets the same answer.
		res, errObj := rev.call("logging/setLevel", `{"level":"debug"}`)
		if rev.meta == "" && string(res) != `{}` || rev.meta != "" && !strings.Contains(string(errObj), "-32601") {
			t.Errorf("%s logging/setLevel: %s %s", rev.name, res, errObj)
		}
	},
	"ping": func(t *testing.T, w *enumWorld, rev revision) {
		// No item: every caller gets the same answer (none at 2026-07-28).
		if res, errObj := rev.call("ping", `{}`); rev.meta == "" && string(res) != `{}` || rev.meta != "" && !strings.Contains(string(errObj), "-32601") {
			t.Errorf("%s ping: %s %s", rev.name, res, errObj)
		}
	},
	"initialize": func(t *testing.T, w *enumWorld, rev revision) {
		if rev.meta != "" {
			if res, errObj := rev.call("initialize", `{"protocolVersion":"2026-07-28","capabilities":{},"clientInfo":{"name":"again","version":"1"}}`); res != nil {
				t.Errorf("initialize at the stateless revision: %s %s, want an error", res, errObj)
			}
			return
		}
		res, errObj := w.bob2025.call("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"again","version":"1"}}`)
		if !strings.Contains(string(res), "io.example/open") || strings.Contains(string(res), "io.example/hidden") {
			t.Errorf("bob's initialize: %s %s, want open's extension and not hidden's", res, errObj)
		}
	},
	protocol.MethodDiscover: func(t *testing.T, w *enumWorld, rev revision) {
		res := works(t, rev, protocol.MethodDiscover, `{}`)
		if rev.meta != "" && (!strings.Contains(string(res), "io.example/open") || strings.Contains(string(res), "io.example/hidden")) {
			t.Errorf("bob's server/discover: %s, want open's extension and not hidden's", res)
		}
		if strings.Contains(string(res), "hidden") {
			t.Errorf("%s: bob's server/discover names the hidden server: %s", rev.name, res)
		}
	},
}

// taskCase: bob naming alice's task (on the hidden server) gets what an
// id never issued gets; his own task on open works.
func taskCase(method string) func(t *testing.T, w *enumWorld, rev revision) {
	return func(t *testing.T, w *enumWorld, rev revision) {
		if rev.meta != "" && method == "tasks/result" {
			if res, errObj := rev.call(method, `{"taskId":"`+w.bobTask+`"}`); res != nil || !strings.Contains(string(errObj), "-32601") {
				t.Errorf("%s %s: %s %s, want -32601 (removed)", rev.name, method, res, errObj)
			}
			return
		}
		forged := w.aliceTask[:len(w.aliceTask)-4] + "AAAA"
		params := `{"taskId":"` + w.aliceTask + `"}`
		if method == "tasks/update" {
			params = `{"taskId":"` + w.aliceTask + `","inputResponses":{}}`
		}
		w.sameAnswer(t, rev, method, params, w.aliceTask, forged)
		own := w.bobTask
		if rev.meta != "" {
			own = w.bobNowTask
		}
		if method != "tasks/update" {
			works(t, rev, method, strings.ReplaceAll(params, w.aliceTask, own))
			return
		}
		// bob's own task: forwarded (2025-11-25), or, having asked for no
		// input, refused naming its server (2026-07-28), which no refusal
		// of another's task does.
		if res, errObj := rev.call(method, strings.ReplaceAll(params, w.aliceTask, own)); res == nil && !strings.Contains(string(errObj), `server \"open\"`) {
			t.Errorf("%s tasks/update of bob's own task: %s %s, want it known (on open)", rev.name, res, errObj)
		}
	}
}

// TestViewEveryMethodHasACase: every method the trunk answers has a case
// above, and every case a method.
func TestViewEveryMethodHasACase(t *testing.T) {
	methods := switchedMethods(t, dispatchers)
	for _, m := range methods {
		if methodCases[m] == nil {
			t.Errorf("the trunk answers %q, which has no case in methodCases: say how a hidden item fares there", m)
		}
	}
	for m := range methodCases {
		if !slices.Contains(methods, m) {
			t.Errorf("methodCases has %q, which no dispatch answers", m)
		}
	}
	notes := switchedMethods(t, forwarders)
	for _, n := range notes {
		if !slices.Contains(enumNotifications, n) {
			t.Errorf("the trunk forwards %q, which TestViewNotifications does not send: add it to enumServer's notify tool and enumNotifications", n)
		}
	}
	for _, n := range enumNotifications {
		if !slices.Contains(notes, n) {
			t.Errorf("enumNotifications has %q, which nothing forwards", n)
		}
	}
}

// TestViewMethods runs every method's case for bob at both revisions.
func TestViewMethods(t *testing.T) {
	w := newEnumWorld(t)
	methods := switchedMethods(t, dispatchers)
	for _, rev := range w.revisions() {
		for _, m := range methods {
			if c := methodCases[m]; c != nil {
				t.Run(rev.name+"/"+m, func(t *testing.T) { c(t, w, rev) })
			}
		}
	}
}

// enumNotifications are the notifications enumServer's notify tool sends,
// by the names the forwarders switch on ("*": its custom one).
var enumNotifications = []string{"*", "notifications/message", "notifications/progress", "notifications/resources/updated", tasks.NotificationMethod, tasks.StatusMethod}

// TestViewNotifications: what the hidden server sends, during alice's call
// on it, never reaches bob at either revision (as nothing reaches him of a
// server that does not exist); what open sends during bob's own call on
// it does.
func TestViewNotifications(t *testing.T) {
	w := newEnumWorld(t)
	if res, errObj := w.bob2025.call("resources/subscribe", `{"uri":"mcptrunk://open/open://doc"}`); res == nil {
		t.Fatalf("bob subscribing: %s", errObj)
	}
	if res, errObj := w.alice.call("resources/subscribe", `{"uri":"mcptrunk://hidden/hidden://doc"}`); res == nil {
		t.Fatalf("alice subscribing: %s", errObj)
	}
	for _, rev := range w.revisions() {
		t.Run(rev.name, func(t *testing.T) {
			rev.h.seen = nil
			res, errObj := w.alice.call("tools/call", `{"name":"mcp__hidden__hidden_notify","arguments":{},"_meta":{"progressToken":"a1"}}`)
			if res == nil {
				t.Fatalf("alice's call: %s", errObj)
			}
			rev.call("ping", `{}`) // answered after whatever was queued for bob
			for _, m := range rev.h.seen {
				if strings.Contains(string(m["method"])+string(m["params"]), "hidden") {
					t.Errorf("bob got %s %s of the hidden server", m["method"], m["params"])
				}
			}
			if !slices.Contains(w.alice.seenMethods(), "notifications/message") {
				t.Errorf("alice, who sees hidden, got none of its log: %v", w.alice.seenMethods())
			}

			rev.h.seen = nil
			if rev.meta != "" {
				// A stateless host hears of its tasks on a listen naming them.
				rev.h.send(`{"jsonrpc":"2.0","id":"tasks","method":"subscriptions/listen","params":{"notifications":{"taskIds":["` + w.bobNowTask + `"]},"_meta":` + enumMeta + `}}`)
				rev.h.waitFor(protocol.NotificationAcknowledged)
				defer rev.h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"tasks"}}`)
			}
			rev.call("tools/call", `{"name":"mcp__open__open_notify","arguments":{},"_meta":{"progressToken":"b1"}}`)
			got := rev.h.seenMethods()
			want := []string{"notifications/progress", "notifications/message", "notifications/open/custom"}
			if rev.meta == "" {
				want = append(want, "notifications/resources/updated", tasks.StatusMethod)
			}
			for _, m := range want {
				if !slices.Contains(got, m) {
					t.Errorf("bob's own call on open: he got %v, want %s among them", got, m)
				}
			}
		})
	}
}
