package main

//lint:file-ignore SA1019 roots, sampling and logging are deprecated by the 2026-07-28 revision (SEP-2577), but the trunk still carries them for 2025-era hosts and servers, and these tests keep that working.

// Differential tests (issue #3, "results and errors exactly as sent"): one
// upstream run twice, once directly and once behind mcptrunk, both driven by
// the same go-sdk client (answering sampling, elicitation and roots the same
// way), and everything they answer compared after the trunk's names and URIs
// are mapped back: catalogs, every safe tool's result or error with its
// progress notifications and log messages, every prompt, every resource and
// an expansion of every template, and completions for every prompt argument
// and template variable.

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptrunk/mcptrunk/internal/protocol"
)

func TestDifferentialConformance(t *testing.T) {
	t.Parallel()
	runDifferential(t, "conformance", []string{conformanceBin(t)}, conformancePlan)
}

func TestDifferentialEverything(t *testing.T) {
	t.Parallel()
	runDifferential(t, "everything", everythingArgv(t), everythingPlan)
}

// diffSide is one of the two sessions.
type diffSide struct {
	name string // "directly" or "through the trunk"
	h    *host
	// ns is the server's id in the names this side sees (mcp__<ns>__,
	// mcptrunk://<ns>/, the logger <ns>/...), "" when it sees the server's
	// own names: directly, or through a trunk that does not namespace it.
	ns string
	// export maps a raw tool or prompt name to what this side calls it;
	// uri does the same for resource URIs.
	export func(string) string
	uri    func(string) string
}

// newDiffSide is a side that sees the server's names namespaced under ns,
// or as they are when ns is "".
func newDiffSide(name string, h *host, ns string) diffSide {
	s := diffSide{name: name, h: h, ns: ns,
		export: func(raw string) string { return raw },
		uri:    func(raw string) string { return raw },
	}
	if ns != "" {
		s.export = func(raw string) string { return "mcp__" + ns + "__" + raw }
		s.uri = func(raw string) string { return "mcptrunk://" + ns + "/" + raw }
	}
	return s
}

// trunksOwn reports whether a tool name or resource URI is one of the
// trunk's own, which only the side through the trunk lists.
func trunksOwn(name string) bool {
	return strings.HasPrefix(name, "mcp__trunk__") || strings.HasPrefix(name, "mcptrunk://trunk/")
}

// diffCell says which protocol revisions one differential run speaks.
type diffCell struct {
	// host is the revision the host asks the trunk for and direct the one
	// the direct client asks the upstream for ("": go-sdk's default,
	// 2026-07-28 after server/discover, else initialize at 2025-11-25).
	host, direct string
	// config: more members of the upstream's entry in the trunk's config
	// (its "protocolVersion").
	config server
	// wantHost and wantDirect are the revisions the two sessions must
	// negotiate, wantUpstream the one the trunk must speak to the upstream,
	// seen on a tap ("": not checked).
	wantHost, wantDirect, wantUpstream string
}

// runDifferential compares the upstream directly and behind the trunk with
// both sessions on 2025-11-25, the revision the trunk spoke to hosts and
// upstreams alike when these tests were written; TestRevisionMatrix runs
// the other revisions.
func runDifferential(t *testing.T, name string, argv []string, plan diffPlan) {
	runDiffCell(t, name, argv, plan, diffCell{host: "2025-11-25", direct: "2025-11-25", wantHost: "2025-11-25", wantDirect: "2025-11-25"})
}

func runDiffCell(t *testing.T, name string, argv []string, plan diffPlan, cell diffCell) {
	runDiffVia(t, name, argv, plan, cell, hostConfig{full: true, roots: protoRoots}, trunkHost)
}

// runDiffVia is runDiffCell with both hosts as hc says, and the host of the
// trunk's side made by via from the trunk's config: mcptrunk serve over
// stdio (trunkHost), or mcptrunk connect to a serve --http.
func runDiffVia(t *testing.T, name string, argv []string, plan diffPlan, cell diffCell, hc hostConfig, via func(testing.TB, context.Context, string, hostConfig, string) *host) {
	ctx := testCtx(t, 180*time.Second)
	entry := server{"command": argv[0], "args": argv[1:]}
	var upstreamTap *tap
	if cell.wantUpstream != "" {
		entry, upstreamTap = tapped(t, argv...)
	}
	entry["timeouts"] = slowTimeouts
	for k, v := range cell.config {
		entry[k] = v
	}
	cfg := writeConfig(t, map[string]server{name: entry}, map[string]any{"startupWait": "60s"})
	through := newDiffSide("through the trunk", via(t, ctx, cfg, hc, cell.host), name)
	direct := newDiffSide("directly", directHost(t, ctx, argv, hc, cell.direct), "")
	compareSides(t, ctx, name, plan, cell, direct, through, upstreamTap)
}

// compareSides runs the plan on both sides and requires the same answers
// from each, once the names and URIs each side sees are mapped back to the
// server's (server names it in messages). upstreamTap, when not nil, taps
// the trunk's connection to the server.
func compareSides(t *testing.T, ctx context.Context, server string, plan diffPlan, cell diffCell, direct, through diffSide, upstreamTap *tap) {
	t.Helper()
	if got := through.h.InitializeResult().ProtocolVersion; cell.wantHost != "" && got != cell.wantHost {
		t.Errorf("the host negotiated %q with the trunk, want %q", got, cell.wantHost)
	}
	if got := direct.h.InitializeResult().ProtocolVersion; cell.wantDirect != "" && got != cell.wantDirect {
		t.Errorf("the direct client negotiated %q with %s, want %q", got, server, cell.wantDirect)
	}
	// A host on 2026-07-28 compared with a direct session on 2025-11-25
	// (an upstream that speaks only that): every result the host gets
	// must say resultType "complete", which the direct result cannot, and
	// is compared without it.
	resultTypeAdded := protocol.IsStateless(through.h.InitializeResult().ProtocolVersion) &&
		!protocol.IsStateless(direct.h.InitializeResult().ProtocolVersion)
	// The other way round, a host on 2025-11-25 compared with a direct
	// session on 2026-07-28 (an upstream pinned to it): every direct result
	// must say resultType "complete", which the host's cannot, and is
	// compared without it.
	resultTypeDropped := !protocol.IsStateless(through.h.InitializeResult().ProtocolVersion) &&
		protocol.IsStateless(direct.h.InitializeResult().ProtocolVersion)
	sides := []diffSide{direct, through}
	// logging/setLevel: both sides must answer alike (a server on
	// 2026-07-28 may not have it).
	var levelErrs [2]error
	for i, s := range sides {
		levelErrs[i] = s.h.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"})
	}
	if (levelErrs[0] == nil) != (levelErrs[1] == nil) ||
		(levelErrs[0] != nil && mustJSON(asWireError(levelErrs[0])) != mustJSON(asWireError(levelErrs[1]))) {
		t.Errorf("logging/setLevel: directly %v, through the trunk %v", levelErrs[0], levelErrs[1])
	}

	// normal turns a result from either side into comparable JSON.
	normal := func(t *testing.T, s diffSide, v any) string {
		t.Helper()
		g := decode(t, v)
		if s.ns != "" {
			var n int
			g = unnamespace(t, g, s.ns, &n)
		}
		return mustJSON(plan.normalise(t, withoutServerInfo(g)))
	}
	hostStateless := protocol.IsStateless(through.h.InitializeResult().ProtocolVersion)
	// normalResult is normal for a result.
	normalResult := func(t *testing.T, s diffSide, v any) string {
		t.Helper()
		m, ok := decode(t, v).(map[string]any)
		if !ok {
			return normal(t, s, v)
		}
		if resultTypeAdded && s.name == through.name {
			if m["resultType"] != "complete" {
				t.Errorf("a result to the host on 2026-07-28 has resultType %v, want \"complete\": %s", m["resultType"], mustJSON(m))
			}
			delete(m, "resultType")
		}
		if resultTypeDropped && s.name == direct.name {
			if m["resultType"] != "complete" {
				t.Errorf("a direct result on 2026-07-28 has resultType %v, want \"complete\": %s", m["resultType"], mustJSON(m))
			}
			delete(m, "resultType")
		}
		if !hostStateless {
			// The trunk gives a 2025-era host no cache hints, which go-sdk's
			// servers send at every revision (docs/protocol.md); go-sdk's
			// client decodes their absence as "" and 0.
			delete(m, "cacheScope")
			delete(m, "ttlMs")
		} else if !protocol.IsStateless(direct.h.InitializeResult().ProtocolVersion) && s.name == through.name && m["cacheScope"] == "private" {
			// A 2025-era server gives no cache hints; to a 2026-07-28 host
			// the trunk gives a read the ones that revision requires (0,
			// private). go-sdk's client decodes their absence as "".
			m["cacheScope"] = ""
		}
		return normal(t, s, m)
	}
	// logMeta asks a side on 2026-07-28 for the log messages
	// logging/setLevel asks for on 2025-11-25: the revision has the level in
	// each request. Each side asks as its own revision does (a direct
	// session on 2026-07-28 behind a host on 2025-11-25, for one).
	logMeta := func(s diffSide) mcp.Meta {
		if !protocol.IsStateless(s.h.InitializeResult().ProtocolVersion) {
			return nil
		}
		return mcp.Meta{protocol.MetaLogLevel: "debug"}
	}

	// ---- catalogs ----
	var tools []*mcp.Tool
	var prompts []*mcp.Prompt
	var templates []*mcp.ResourceTemplate
	var resources []*mcp.Resource
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err := eventually(wctx, 250*time.Millisecond, func() error {
		a, b := listAll(t, ctx, direct.h.ClientSession), listAll(t, ctx, through.h.ClientSession)
		tools, prompts, resources, templates = a.tools, a.prompts, a.resources, a.templates
		var problems []string
		same := func(kind string, d, th []string, key func(int) (any, any)) {
			want := slices.Clone(d)
			sort.Strings(want)
			got := append([]string(nil), th...)
			if !slices.Equal(want, got) {
				problems = append(problems, fmt.Sprintf("%s: directly %q, through the trunk %q", kind, want, got))
				return
			}
			for i := range d {
				x, y := key(i)
				if x == nil {
					continue
				}
				if mustJSON(x) != mustJSON(y) {
					problems = append(problems, fmt.Sprintf("%s %s:\n  directly:          %s\n  through the trunk: %s", kind, d[i], mustJSON(x), mustJSON(y)))
				}
			}
		}
		byName := func(items []*mcp.Tool, name string) *mcp.Tool {
			for _, it := range items {
				if it.Name == name {
					return it
				}
			}
			return nil
		}
		var dn, tn []string
		for _, x := range a.tools {
			dn = append(dn, through.export(x.Name))
		}
		for _, x := range b.tools {
			if strings.HasPrefix(x.Name, through.export("")) && !trunksOwn(x.Name) {
				tn = append(tn, x.Name)
			}
		}
		same("tools", dn, tn, func(i int) (any, any) {
			y := byName(b.tools, dn[i])
			if y == nil {
				return nil, nil
			}
			c := *a.tools[i]
			c.Name = dn[i]
			return &c, y
		})
		dn, tn = nil, nil
		for _, x := range a.prompts {
			dn = append(dn, through.export(x.Name))
		}
		for _, x := range b.prompts {
			if strings.HasPrefix(x.Name, through.export("")) && !trunksOwn(x.Name) {
				tn = append(tn, x.Name)
			}
		}
		same("prompts", dn, tn, func(int) (any, any) { return nil, nil })
		dn, tn = nil, nil
		for _, x := range a.resources {
			dn = append(dn, through.uri(x.URI))
		}
		for _, x := range b.resources {
			if strings.HasPrefix(x.URI, through.uri("")) && !trunksOwn(x.URI) {
				tn = append(tn, x.URI)
			}
		}
		same("resources", dn, tn, func(int) (any, any) { return nil, nil })
		dn, tn = nil, nil
		for _, x := range a.templates {
			dn = append(dn, through.uri(x.URITemplate))
		}
		for _, x := range b.templates {
			if strings.HasPrefix(x.URITemplate, through.uri("")) && !trunksOwn(x.URITemplate) {
				tn = append(tn, x.URITemplate)
			}
		}
		same("templates", dn, tn, func(int) (any, any) { return nil, nil })
		if len(problems) > 0 {
			return fmt.Errorf("%s", strings.Join(problems, "\n"))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("the catalogs differ: %v", err)
	}
	if cell.wantUpstream != "" {
		if got := tapRevision(upstreamTap); got != cell.wantUpstream {
			t.Errorf("the trunk spoke %q to %s, want %q", got, server, cell.wantUpstream)
		}
	}
	for _, m := range plan.must {
		if !slices.ContainsFunc(tools, func(x *mcp.Tool) bool { return x.Name == m }) &&
			!slices.ContainsFunc(prompts, func(x *mcp.Prompt) bool { return x.Name == m }) {
			t.Errorf("%s does not list %s, which the comparison needs", server, m)
		}
	}

	// Start-up chatter (server-everything logs the roots it got, waited
	// for below) is recorded before the comparison marks the logs.
	quiet := func() {
		direct.h.rec.settle(ctx)
		through.h.rec.settle(ctx)
	}
	// startupLate: the server's start-up request was refused through the
	// trunk, and the call of plan.startupAgain is yet to log startupLog.
	startupLate := false
	if plan.startupLog != "" {
		for _, s := range sides {
			if s.name == through.name && hostStateless {
				if upstreamTap == nil {
					t.Fatalf("%s: a host on 2026-07-28 needs the upstream tapped to see its start-up request refused", server)
				}
				resp := upstreamTap.waitAnswered(t, ctx, server+"'s roots/list at start-up", isMethod("roots/list"))
				if resp.Error == nil || resp.Error.Code != -32601 {
					t.Fatalf("%s's roots/list outside any call of a host on 2026-07-28: got %s, want the trunk's -32601", server, resp.Raw)
				}
				startupLate = plan.startupAgain != ""
				continue
			}
			if !waitFor(ctx, 30*time.Second, func() bool {
				for _, l := range s.h.rec.logsSnapshot() {
					if l.Data == plan.startupLog {
						return true
					}
				}
				return false
			}) {
				t.Fatalf("%s: %s never logged %q", s.name, server, plan.startupLog)
			}
		}
	}
	quiet()

	// logsSince returns the log messages a side got after mark, with the
	// trunk's logger naming mapped back.
	logsSince := func(t *testing.T, s diffSide, mark int) []string {
		t.Helper()
		var out []string
		for _, l := range s.h.rec.logsSnapshot()[mark:] {
			c := *l
			if s.ns != "" {
				switch {
				case c.Logger == s.ns:
					c.Logger = ""
				case strings.HasPrefix(c.Logger, s.ns+"/"):
					c.Logger = strings.TrimPrefix(c.Logger, s.ns+"/")
				default:
					t.Errorf("a log message through the trunk does not name the server: %s", mustJSON(l))
				}
			}
			out = append(out, normal(t, s, &c))
		}
		return out
	}
	progressOf := func(s diffSide, token string) []string {
		var out []string
		for _, p := range s.h.rec.progressFor(token) {
			out = append(out, fmt.Sprintf("%v/%v %q", p.Progress, p.Total, p.Message))
		}
		return out
	}

	// compare runs f on both sides and requires the same outcome: result
	// (normalised), or JSON-RPC error, plus the same log messages and, for
	// token != "", the same progress notifications.
	compare := func(t *testing.T, what, token string, f func(s diffSide) (any, error)) {
		t.Helper()
		var results, logs, progress [2]string
		var errs [2]error
		for i, s := range sides {
			mark := len(s.h.rec.logsSnapshot())
			res, err := f(s)
			errs[i] = err
			if err == nil {
				results[i] = normalResult(t, s, res)
			}
			s.h.rec.settle(ctx) // the log and progress messages that came before the result
			got := logsSince(t, s, mark)
			if startupLate && s.name == through.name && what == "tools/call "+plan.startupAgain {
				// The message the server logged directly at start-up.
				var want string
				for _, l := range direct.h.rec.logsSnapshot() {
					if l.Data == plan.startupLog {
						want = normal(t, direct, l)
						break
					}
				}
				if len(got) == 0 || got[0] != want {
					t.Errorf("%s: a server whose request at start-up was refused must log %s first, as it did at start-up directly: %q", what, want, got)
				} else {
					got = got[1:]
				}
				startupLate = false
			}
			logs[i] = strings.Join(got, "\n")
			if token != "" {
				progress[i] = strings.Join(progressOf(s, token), "\n")
			}
		}
		refusal, refused := plan.hostFails[strings.TrimPrefix(what, "tools/call ")]
		switch {
		case refused && resultTypeAdded && errs[0] == nil && errs[1] != nil:
			// results[0] is JSON: the message in it is escaped.
			if !strings.Contains(results[0], strings.Trim(mustJSON(refusal), `"`)) || !strings.Contains(errs[1].Error(), refusal) {
				t.Errorf("%s: want the host's refusal %q both ways: directly %s, through the trunk %v", what, refusal, results[0], errs[1])
			}
		case errs[0] != nil || errs[1] != nil:
			if errs[0] == nil || errs[1] == nil {
				t.Errorf("%s: directly %v / %s, through the trunk %v / %s", what, errs[0], results[0], errs[1], results[1])
				break
			}
			d, th := asWireError(errs[0]), asWireError(errs[1])
			if d == nil || th == nil {
				if errs[0].Error() != errs[1].Error() {
					t.Errorf("%s: directly %v, through the trunk %v", what, errs[0], errs[1])
				}
				break
			}
			if mustJSON(d) != mustJSON(th) {
				t.Errorf("%s: the error changed on the way:\n  directly:          %s\n  through the trunk: %s", what, mustJSON(d), mustJSON(th))
			}
		case results[0] != results[1]:
			t.Errorf("%s: the result changed on the way:\n  directly:          %s\n  through the trunk: %s", what, results[0], results[1])
		}
		if logs[0] != logs[1] {
			t.Errorf("%s: log messages differ:\n  directly:\n%s\n  through the trunk:\n%s", what, logs[0], logs[1])
		}
		if progress[0] != progress[1] {
			t.Errorf("%s: progress differs:\n  directly:          %s\n  through the trunk: %s", what, progress[0], progress[1])
		}
	}

	// ---- tools ----
	var order, lastOnes []string
	for _, tool := range tools {
		switch {
		case plan.skip[tool.Name] != "":
			t.Logf("not calling %s: %s", tool.Name, plan.skip[tool.Name])
		case plan.tools[tool.Name] == nil:
			t.Errorf("%s lists tool %s, which the plan does not cover: decide whether it is safe to call", server, tool.Name)
		case slices.Contains(plan.last, tool.Name):
			lastOnes = append(lastOnes, tool.Name)
		default:
			order = append(order, tool.Name)
		}
	}
	called := 0
	for _, name := range append(order, lastOnes...) {
		times := 1
		if plan.twice[name] {
			times = 2
		}
		for n := range times {
			token := fmt.Sprintf("diff-%s-%d", name, n)
			compare(t, "tools/call "+name, token, func(s diffSide) (any, error) {
				p := &mcp.CallToolParams{Meta: logMeta(s), Name: s.export(name), Arguments: plan.tools[name]}
				p.SetProgressToken(token)
				return s.h.CallTool(ctx, p)
			})
			called++
		}
	}

	// ---- prompts ----
	for _, p := range prompts {
		args, ok := plan.prompts[p.Name]
		if !ok {
			t.Errorf("%s lists prompt %s, which the plan does not cover", server, p.Name)
			continue
		}
		compare(t, "prompts/get "+p.Name, "", func(s diffSide) (any, error) {
			return s.h.GetPrompt(ctx, &mcp.GetPromptParams{Meta: logMeta(s), Name: s.export(p.Name), Arguments: args})
		})
	}

	// ---- resources and templates ----
	var uris []string
	for _, r := range resources {
		uris = append(uris, r.URI)
	}
	for _, tpl := range templates {
		u, ok := plan.templates[tpl.URITemplate]
		if !ok {
			t.Errorf("%s lists template %s, which the plan does not cover", server, tpl.URITemplate)
			continue
		}
		uris = append(uris, u)
	}
	for _, u := range uris {
		compare(t, "resources/read "+u, "", func(s diffSide) (any, error) {
			return s.h.ReadResource(ctx, &mcp.ReadResourceParams{Meta: logMeta(s), URI: s.uri(u)})
		})
	}

	// ---- completions: every prompt argument, every template variable ----
	completions := 0
	for _, p := range prompts {
		for _, a := range p.Arguments {
			completions++
			compare(t, "completion/complete "+p.Name+" "+a.Name, "", func(s diffSide) (any, error) {
				return s.h.Complete(ctx, &mcp.CompleteParams{
					Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: s.export(p.Name)},
					Argument: mcp.CompleteParamsArgument{Name: a.Name, Value: ""},
				})
			})
		}
	}
	variable := regexp.MustCompile(`\{([^}]+)\}`)
	for _, tpl := range templates {
		for _, m := range variable.FindAllStringSubmatch(tpl.URITemplate, -1) {
			completions++
			compare(t, "completion/complete "+tpl.URITemplate+" "+m[1], "", func(s diffSide) (any, error) {
				return s.h.Complete(ctx, &mcp.CompleteParams{
					Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: s.uri(tpl.URITemplate)},
					Argument: mcp.CompleteParamsArgument{Name: m[1], Value: "1"},
				})
			})
		}
	}

	if startupLate {
		t.Errorf("%s was never called, which had %s ask again for what the trunk refused at start-up", plan.startupAgain, server)
	}
	t.Logf("%s: compared %d tool calls, %d prompts, %d resource reads, %d completions; %d log messages and %d progress notifications directly",
		server, called, len(prompts), len(uris), completions, len(direct.h.rec.logsSnapshot()), direct.h.rec.progressCount())
	if called < len(plan.tools)/2 || len(prompts) == 0 || len(uris) == 0 {
		t.Errorf("too little was compared to prove anything")
	}
}
