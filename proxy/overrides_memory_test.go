package proxy

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
)

// TestToolOverridesInMemory: through the trunk, a renamed tool is listed
// under its new name with the config's description, without its fixed
// argument and with its default in the schema; a call of it reaches the
// upstream name with the fixed value and the default filled in; a call
// giving the fixed argument is refused before the server is asked; the
// old name is unknown, with the new one named; and tool search's
// call_tool goes the same way.
func TestToolOverridesInMemory(t *testing.T) {
	var got []string // the arguments the server received, in order
	srv := recordingEcho(&got)
	overrides := map[string]any{"tools": map[string]any{"echo": map[string]any{
		"name": "say", "description": "Say it back",
		"arguments": map[string]any{"text": map[string]any{"fixed": "fixed-text"}, "times": map[string]any{"default": 2}},
	}}}
	for _, search := range []bool{false, true} {
		got = nil
		_, h := memTrunk(t, memserver.Set{"notes": srv}, map[string]map[string]any{"notes": {"overrides": overrides}}, map[string]any{"toolSearch": search}, nil)
		h.initialize(`{}`)
		call := func(args string) (string, json.RawMessage) { return callText(h, "mcp__notes__say", args) }
		if search {
			call = func(args string) (string, json.RawMessage) {
				res, errObj := h.call("tools/call", `{"name":"mcp__trunk__call_tool","arguments":{"name":"mcp__notes__say","arguments":`+args+`}}`)
				var r struct {
					Content []struct{ Text string } `json:"content"`
				}
				_ = json.Unmarshal(res, &r)
				if len(r.Content) == 0 {
					return "", errObj
				}
				return r.Content[0].Text, errObj
			}
			res, _ := h.call("tools/call", `{"name":"mcp__trunk__search_tools","arguments":{"query":"say it back"}}`)
			if !strings.Contains(string(res), `mcp__notes__say`) || !strings.Contains(string(res), `Say it back`) {
				t.Errorf("search for the new description: %s", res)
			}
		} else {
			tool, ok := h.tools()["mcp__notes__say"]
			want := `{"name":"mcp__notes__say","description":"Say it back","inputSchema":{"type":"object","properties":{"times":{"type":"integer","default":2}}}}`
			if !ok || string(tool) != want {
				t.Errorf("listed: %s (%v)\nwant %s", tool, ok, want)
			}
			if _, ok := h.tools()["mcp__notes__echo"]; ok {
				t.Error("the old name is listed too")
			}
		}
		if text, errObj := call(`{}`); text != "fixed-text" {
			t.Errorf("search %v: call with {}: %q %s", search, text, errObj)
		}
		if text, errObj := call(`{"times":5}`); text != "fixed-text" {
			t.Errorf("search %v: call with times: %q %s", search, text, errObj)
		}
		text, errObj := call(`{"text":"mine"}`)
		if !strings.Contains(string(errObj)+text, `tool \"mcp__notes__say\": argument \"text\" is fixed`) && !strings.Contains(text, `tool "mcp__notes__say": argument "text" is fixed`) {
			t.Errorf("search %v: a fixed argument given: %q %s", search, text, errObj)
		}
		want := []string{`echo {"text":"fixed-text","times":2}`, `echo {"times":5,"text":"fixed-text"}`}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("search %v: the server got\n%s\nwant\n%s", search, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if !search {
			_, errObj := callText(h, "mcp__notes__echo", `{}`)
			if !strings.Contains(string(errObj), `rename it \"mcp__notes__say\"`) {
				t.Errorf("the old name: %s", errObj)
			}
		}
	}
}

// TestPromptOverridesInMemory: a renamed prompt is listed under its new
// name, its defaulted argument not required, and a get of it reaches the
// upstream name with the default filled in.
func TestPromptOverridesInMemory(t *testing.T) {
	srv := &memserver.Server{
		Prompts: []json.RawMessage{json.RawMessage(`{"name":"summarize","description":"Summarize","arguments":[{"name":"style","required":true}]}`)},
		Handle: func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
			if method != "prompts/get" {
				return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "no %s", method)
			}
			name, _ := rawjson.StringField(params, "name")
			text, _ := json.Marshal(name + " " + string(mustField(params, "arguments")))
			return json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":` + string(text) + `}}]}`), nil
		},
	}
	overrides := map[string]any{"prompts": map[string]any{"summarize": map[string]any{
		"name": "digest", "description": "Sum it up", "arguments": map[string]any{"style": map[string]any{"default": "short"}},
	}}}
	_, h := memTrunk(t, memserver.Set{"notes": srv}, map[string]map[string]any{"notes": {"overrides": overrides}}, nil, nil)
	h.initialize(`{}`)
	res, errObj := h.call("prompts/list", `{}`)
	if want := `{"name":"mcp__notes__digest","description":"Sum it up","arguments":[{"name":"style","required":false}]}`; !strings.Contains(string(res), want) {
		t.Errorf("prompts/list: %s %s\nwant it to hold %s", res, errObj, want)
	}
	res, errObj = h.call("prompts/get", `{"name":"mcp__notes__digest"}`)
	if !strings.Contains(string(res), `summarize {\"style\":\"short\"}`) {
		t.Errorf("prompts/get without style: %s %s", res, errObj)
	}
	res, errObj = h.call("prompts/get", `{"name":"mcp__notes__digest","arguments":{"style":"long"}}`)
	if !strings.Contains(string(res), `summarize {\"style\":\"long\"}`) {
		t.Errorf("prompts/get with style: %s %s", res, errObj)
	}
}

// TestProfileOverridesInMemory: a profile's own overrides, set over the
// server's, shape what that profile's caller is listed and what its calls
// carry (its fixed argument enforced), while a caller on no profile and
// one on another profile see and call the server's shape.
func TestProfileOverridesInMemory(t *testing.T) {
	var got []string // the arguments the server received, in order
	srv := recordingEcho(&got)
	own := map[string]any{"tools": map[string]any{"echo": map[string]any{
		"description": "Echo it", "arguments": map[string]any{"times": map[string]any{"default": 2}},
	}}}
	profiles := map[string]any{
		"shaped": map[string]any{"overrides": map[string]any{"notes": map[string]any{"tools": map[string]any{"echo": map[string]any{
			"name": "say", "arguments": map[string]any{"text": map[string]any{"fixed": "profile-text"}},
		}}}}},
		"plain": map[string]any{"servers": []string{"notes"}},
	}
	tr, stdio := memTrunk(t, memserver.Set{"notes": srv}, map[string]map[string]any{"notes": {"overrides": own}}, map[string]any{"profiles": profiles}, nil)
	tr.Share()
	stdio.initialize(`{}`)
	attach := func(id, profile string) *memHost {
		h := &memHost{pipeHost: attachPipes(t, tr, &SessionOptions{ID: id, Profile: profile})}
		h.initialize(`{}`)
		return h
	}
	shaped, plain := attach("shaped", "shaped"), attach("plain", "plain")

	// The profile's shape: its name and fixed argument over the server's
	// description and default.
	tool, ok := shaped.tools()["mcp__notes__say"]
	want := `{"name":"mcp__notes__say","description":"Echo it","inputSchema":{"type":"object","properties":{"times":{"type":"integer","default":2}}}}`
	if !ok || string(tool) != want {
		t.Errorf("the shaped profile lists: %s (%v)\nwant %s", tool, ok, want)
	}
	if _, ok := shaped.tools()["mcp__notes__echo"]; ok {
		t.Error("the shaped profile lists the server's name too")
	}
	// The server's shape for the others.
	for name, h := range map[string]*memHost{"no profile": stdio, "plain": plain} {
		tool, ok := h.tools()["mcp__notes__echo"]
		want := `{"name":"mcp__notes__echo","description":"Echo it","inputSchema":{"type":"object","properties":{"text":{"type":"string"},"times":{"type":"integer","default":2}},"required":["text"]}}`
		if !ok || string(tool) != want {
			t.Errorf("%s lists: %s (%v)\nwant %s", name, tool, ok, want)
		}
		if _, ok := h.tools()["mcp__notes__say"]; ok {
			t.Errorf("%s lists the profile's name", name)
		}
	}

	if text, errObj := callText(shaped, "mcp__notes__say", `{}`); text != "profile-text" {
		t.Errorf("the shaped profile calling say with {}: %q %s", text, errObj)
	}
	if text, errObj := callText(shaped, "mcp__notes__say", `{"text":"mine"}`); !strings.Contains(string(errObj)+text, `argument \"text\" is fixed`) && !strings.Contains(text, `argument "text" is fixed`) {
		t.Errorf("the shaped profile giving the fixed argument: %q %s", text, errObj)
	}
	if _, errObj := callText(shaped, "mcp__notes__echo", `{"text":"mine"}`); errObj == nil {
		t.Error("the shaped profile called the server's name")
	}
	if text, errObj := callText(plain, "mcp__notes__echo", `{"text":"mine"}`); text != "mine" {
		t.Errorf("the plain profile calling echo: %q %s", text, errObj)
	}
	if text, errObj := callText(stdio, "mcp__notes__echo", `{"text":"own"}`); text != "own" {
		t.Errorf("no profile calling echo: %q %s", text, errObj)
	}
	if _, errObj := callText(plain, "mcp__notes__say", `{}`); errObj == nil {
		t.Error("the plain profile called the shaped profile's name")
	}
	wantGot := []string{`echo {"text":"profile-text","times":2}`, `echo {"text":"mine","times":2}`, `echo {"text":"own","times":2}`}
	if strings.Join(got, "\n") != strings.Join(wantGot, "\n") {
		t.Errorf("the server got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantGot, "\n"))
	}

	// A reload that changes only the profile's overrides reshapes its
	// caller's view (told so) and leaves the server's shape to the others.
	profiles["shaped"] = map[string]any{"overrides": map[string]any{"notes": map[string]any{"tools": map[string]any{"echo": map[string]any{
		"name": "speak", "arguments": map[string]any{"text": map[string]any{"fixed": "reloaded-text"}},
	}}}}}
	if err := tr.Reload(context.Background(), memConfig(t, memserver.Set{"notes": srv}, map[string]map[string]any{"notes": {"overrides": own}}, map[string]any{"profiles": profiles})); err != nil {
		t.Fatalf("reload: %v", err)
	}
	shaped.waitFor("notifications/tools/list_changed")
	if _, ok := shaped.tools()["mcp__notes__speak"]; !ok {
		t.Errorf("after the reload the shaped profile lists %v, want mcp__notes__speak", shaped.toolNames())
	}
	if text, errObj := callText(shaped, "mcp__notes__speak", `{}`); text != "reloaded-text" {
		t.Errorf("after the reload, the shaped profile calling speak: %q %s", text, errObj)
	}
	if _, ok := plain.tools()["mcp__notes__echo"]; !ok {
		t.Errorf("after the reload the plain profile lists %v, want mcp__notes__echo", plain.toolNames())
	}
}

// recordingEcho is a server with one tool, echo (text, times), whose calls
// answer the text and append "name arguments" to got, in order.
func recordingEcho(got *[]string) *memserver.Server {
	return &memserver.Server{
		Tools: []json.RawMessage{json.RawMessage(`{"name":"echo","description":"Echo text","inputSchema":{"type":"object","properties":{"text":{"type":"string"},"times":{"type":"integer"}},"required":["text"]}}`)},
		Handle: func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
			if method != "tools/call" {
				return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "no %s", method)
			}
			name, _ := rawjson.StringField(params, "name")
			*got = append(*got, name+" "+string(mustField(params, "arguments")))
			var a struct{ Text string }
			_ = json.Unmarshal(mustField(params, "arguments"), &a)
			return memserver.Text(a.Text), nil
		},
	}
}
