package proxy

// Exported names, their prefix and their length budget, end to end through
// the trunk with in-memory servers (moved from cmd/mcptrunk's
// TestPolicyPrefix and TestNameBudget, which ran the example and npm
// servers as processes for the same checks).

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
)

// namesLongTool is a 100-character tool name, as notes -long-names has.
var namesLongTool = "get_note_" + strings.Repeat("with_a_name_far_too_long_", 4)[:91]

// namesServers are three servers in the shape of notes (with -long-names),
// weather and server-everything: a call answers "<server>:<raw name>", so
// a test sees which tool of which server it reached.
func namesServers(everything bool) memserver.Set {
	serve := func(server string, tools []string, prompts ...string) *memserver.Server {
		s := &memserver.Server{}
		for _, name := range tools {
			s.Tools = append(s.Tools, memserver.Tool(name, ""))
		}
		for _, name := range prompts {
			p, _ := json.Marshal(map[string]string{"name": name})
			s.Prompts = append(s.Prompts, p)
		}
		s.Handle = func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
			name, _ := rawjson.StringField(params, "name")
			switch method {
			case "tools/call":
				if name == "echo" {
					var args struct{ Text, Message string }
					_ = json.Unmarshal(mustField(params, "arguments"), &args)
					return memserver.Text(args.Text + args.Message), nil
				}
				return memserver.Text(server + ":" + name), nil
			case "prompts/get":
				return json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":"` + server + `:` + name + `"}}]}`), nil
			}
			return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "no %s", method)
		}
		return s
	}
	set := memserver.Set{
		"notes":   serve("notes", []string{"echo", "get_note", "get.note v2", namesLongTool}, "summarize"),
		"weather": serve("weather", []string{"search", "forecast"}, "plan_trip"),
	}
	if everything {
		set["everything"] = serve("everything", []string{"echo", "get-sum", "trigger-long-running-operation", "toggle-simulated-logging"}, "args-prompt")
	}
	return set
}

func mustField(obj json.RawMessage, key string) json.RawMessage {
	start, end, found, err := rawjson.FieldSpan(obj, key)
	if err != nil || !found {
		return json.RawMessage(`{}`)
	}
	return obj[start:end]
}

// callText is the text of a tools/call result, or the error's message.
func callText(h *memHost, name string, args string) (string, json.RawMessage) {
	res, errObj := h.call("tools/call", `{"name":"`+name+`","arguments":`+args+`}`)
	var r struct {
		Content []struct{ Text string } `json:"content"`
	}
	if json.Unmarshal(res, &r) != nil || len(r.Content) == 0 {
		return "", errObj
	}
	return r.Content[0].Text, errObj
}

// wantRefused checks that calling name gives a JSON-RPC error naming it.
func wantRefused(t *testing.T, h *memHost, name string) {
	t.Helper()
	res, errObj := h.call("tools/call", `{"name":`+mustQuote(name)+`,"arguments":{}}`)
	var e struct{ Message string }
	if errObj == nil || json.Unmarshal(errObj, &e) != nil || !strings.Contains(e.Message, name) {
		t.Errorf("tools/call %s: %s %s, want a JSON-RPC error naming it", name, res, errObj)
	}
}

// trunk.prefix "" gives <server>__<name>, which routes; the default gives
// mcp__<server>__<name>; the other scheme does not route.
func TestPrefixInMemory(t *testing.T) {
	for _, c := range []struct {
		name   string
		trunk  map[string]any
		prefix string
	}{
		{"default", nil, "mcp__"},
		{"empty", map[string]any{"prefix": ""}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			set := namesServers(true)
			_, h := memTrunk(t, set, nil, c.trunk, nil)
			h.initialize(`{}`)
			names := h.toolNames()
			for _, n := range names {
				server, _, ok := strings.Cut(strings.TrimPrefix(n, c.prefix), "__")
				if !strings.HasPrefix(n, c.prefix) || !ok || !slices.Contains([]string{"trunk", "notes", "weather", "everything"}, server) {
					t.Errorf("tool %q is not %s<server>__<name>", n, c.prefix)
				}
				if c.prefix == "" && strings.HasPrefix(n, "mcp__") {
					t.Errorf("tool %q carries mcp__ with prefix \"\"", n)
				}
			}
			for _, want := range []string{"everything__get-sum", "everything__echo", "notes__echo", "notes__get_note", "weather__search", "trunk__status"} {
				if !slices.Contains(names, c.prefix+want) {
					t.Errorf("%s%s is missing: %q", c.prefix, want, names)
				}
			}
			res, _ := h.call("prompts/list", `{}`)
			if !strings.Contains(string(res), `"`+c.prefix+`notes__summarize"`) || !strings.Contains(string(res), `"`+c.prefix+`weather__plan_trip"`) {
				t.Errorf("prompts: %s", res)
			}

			// The names route: tools, prompts and the trunk's own.
			if text, errObj := callText(h, c.prefix+"notes__echo", `{"text":"prefixed"}`); text != "prefixed" {
				t.Errorf("%snotes__echo: %q %s", c.prefix, text, errObj)
			}
			if text, errObj := callText(h, c.prefix+"weather__search", `{}`); text != "weather:search" {
				t.Errorf("%sweather__search: %q %s", c.prefix, text, errObj)
			}
			if text, errObj := callText(h, c.prefix+"trunk__status", `{}`); !strings.Contains(text, `"everything"`) {
				t.Errorf("%strunk__status: %q %s", c.prefix, text, errObj)
			}
			if res, errObj := h.call("prompts/get", `{"name":"`+c.prefix+`notes__summarize","arguments":{}}`); !strings.Contains(string(res), "notes:summarize") {
				t.Errorf("prompts/get %snotes__summarize: %s %s", c.prefix, res, errObj)
			}
			other := "notes__echo"
			if c.prefix == "" {
				other = "mcp__notes__echo"
			}
			wantRefused(t, h, other)
		})
	}
}

// namesShortened is the documented shortened name: the sanitized name cut
// so that the whole name is exactly budget long, then "_" and the first 8
// hex digits of sha256(raw) (naming.Assign, level 1).
func namesShortened(prefix, server, raw string, budget int) string {
	base := prefix + server + "__"
	sum := sha256.Sum256([]byte(raw))
	tag := "_" + hex.EncodeToString(sum[:])[:8]
	clean := regexp.MustCompile(`[^A-Za-z0-9_-]`).ReplaceAllString(raw, "_")
	return base + clean[:budget-len(base)-len(tag)] + tag
}

var legalName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// Every exported name fits the budget (64 by default, 40, and 32 under a
// long prefix, where the trunk's own wait_for_servers no longer fits) in
// [A-Za-z0-9_-]; every shortened or renamed name routes to its tool; the
// names are the same for two separate trunks; "get.note v2" becomes
// get_note_v2 and is not reachable by its raw name.
func TestNameBudgetInMemory(t *testing.T) {
	for _, c := range []struct {
		name       string
		budget     int // 0: the default
		prefix     *string
		everything bool
	}{
		{"default", 0, nil, false},
		{"budget40", 40, nil, true},
		{"budget32_longprefix", 32, ptr("mcptrunk__"), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			trunkOpts := map[string]any{}
			limit, prefix := 64, "mcp__"
			if c.budget != 0 {
				trunkOpts["maxNameLength"] = c.budget
				limit = c.budget
			}
			if c.prefix != nil {
				trunkOpts["prefix"] = *c.prefix
				prefix = *c.prefix
			}
			var runs [2][]string
			for run := range runs {
				set := namesServers(c.everything)
				_, h := memTrunk(t, set, nil, trunkOpts, nil)
				h.initialize(`{}`)
				runs[run] = h.toolNames()
				res, _ := h.call("prompts/list", `{}`)
				var prompts struct{ Prompts []struct{ Name string } }
				_ = json.Unmarshal(res, &prompts)
				names := runs[run]
				for _, p := range prompts.Prompts {
					names = append(names, p.Name)
				}
				for _, name := range names {
					if len(name) > limit {
						t.Errorf("%s is %d characters, over the budget of %d", name, len(name), limit)
					}
					if !legalName.MatchString(name) {
						t.Errorf("%q has characters outside [A-Za-z0-9_-]", name)
					}
				}
				if run == 0 {
					continue
				}
				// Every shortened or renamed name routes to its tool.
				raws := map[string][]string{"trunk": {"status", "wait_for_servers"}}
				for server, s := range set {
					for _, tool := range s.Tools {
						name, _ := rawjson.StringField(tool, "name")
						raws[server] = append(raws[server], name)
					}
				}
				for server, list := range raws {
					for _, raw := range list {
						plain := prefix + server + "__" + raw
						exported := plain
						if len(plain) > limit {
							exported = namesShortened(prefix, server, raw, limit)
						} else if raw == "get.note v2" {
							exported = prefix + "notes__get_note_v2"
						}
						if !slices.Contains(runs[run], exported) {
							t.Errorf("%s %q: %s is not exported; tools: %q", server, raw, exported, runs[run])
							continue
						}
						if exported == plain {
							continue
						}
						args := `{"text":"x"}`
						if raw == "wait_for_servers" {
							args = `{"timeoutSeconds":0}`
						}
						text, errObj := callText(h, exported, args)
						if errObj != nil || (server != "trunk" && text != server+":"+raw) {
							t.Errorf("%s (%s %q): %q %s", exported, server, raw, text, errObj)
						}
					}
				}
				wantRefused(t, h, prefix+"notes__get.note v2")
			}
			if !slices.Equal(runs[0], runs[1]) {
				t.Errorf("two trunks exported different names:\n%q\n%q", runs[0], runs[1])
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
