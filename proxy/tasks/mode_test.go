package tasks

import (
	"encoding/json"
	"testing"
)

func TestModeFor(t *testing.T) {
	const (
		caps2025 = `{"tools":{},"tasks":{"requests":{"tools":{"call":{}}}}}`
		extCaps  = `{"tools":{},"extensions":{"` + Extension + `":{}}}`
		required = `{"name":"t","execution":{"taskSupport":"required"}}`
		optional = `{"name":"t","execution":{"taskSupport":"optional"}}`
		hostExt  = `{"` + Extension + `":{}}`
	)
	for _, c := range []struct {
		name, caps, host string
		stateless        bool
		params, tool     string
		want             Mode
	}{
		{"no tasks at the server", `{"tools":{}}`, ``, false, `{}`, required, Direct},
		{"a tool that does not require one", caps2025, ``, false, `{}`, optional, Direct},
		{"the host asked for a task", caps2025, ``, false, `{"task":{}}`, required, Direct},
		{"a 2025 server's task-only tool", caps2025, ``, false, `{}`, required, AsTask2025},
		{"a 2025 server's, a 2026 host", caps2025, ``, true, `{}`, required, AsTask2025},
		{"a 2026 server's, a 2025 host without the extension", extCaps, `{"x":{}}`, false, `{}`, required, AsExtensionTask},
		{"a 2026 server's, a 2025 host with it", extCaps, hostExt, false, `{}`, required, Direct},
		{"a 2026 server's, a 2026 host with the extension", extCaps, hostExt, true, `{}`, required, Direct},
		{"a 2026 server's, a 2026 host without it: the server's -32021", extCaps, `{"x":{}}`, true, `{}`, required, Direct},
		{"a 2025 host's task on a 2026 server", extCaps, ``, false, `{"task":{}}`, optional, toExtension},
		{"a 2025 host's task on a tool that takes none", extCaps, ``, false, `{"task":{}}`, `{"name":"t"}`, Direct},
		{"a 2026 host's, with the extension, on a 2025 server", caps2025, hostExt, true, `{}`, optional, to2025},
		{"a 2026 host's on a 2025 tool that takes none", caps2025, hostExt, true, `{}`, `{"name":"t"}`, Direct},
		{"a server of both models", caps2025[:len(caps2025)-1] + `,"extensions":{"` + Extension + `":{}}}`, hostExt, true, `{}`, optional, Direct},
	} {
		if got := modeFor(json.RawMessage(c.caps), json.RawMessage(c.host), c.stateless, json.RawMessage(c.params), json.RawMessage(c.tool)); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestWithExtension(t *testing.T) {
	for in, want := range map[string]string{
		`{}`: `{"extensions":{"` + Extension + `":{}}}`,
		`{"sampling":{},"extensions":{"io.modelcontextprotocol/ui":{"v":1}}}`: `{"sampling":{},"extensions":{"io.modelcontextprotocol/ui":{"v":1},"` + Extension + `":{}}}`,
	} {
		got := WithExtension(json.RawMessage(in))
		if !DeclaresExtension(got) {
			t.Errorf("WithExtension(%s) = %s: the extension is not declared", in, got)
		}
		var a, b any
		if json.Unmarshal(got, &a) != nil || json.Unmarshal([]byte(want), &b) != nil || !jsonEqual(a, b) {
			t.Errorf("WithExtension(%s) = %s, want %s", in, got, want)
		}
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
