package main

// Helpers of the revision tests (revisions_*_test.go): the revision an
// upstream was spoken to, the plan for mcptrunk-notes, and the TypeScript
// SDK v2 host.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/protocol"
)

// The revisions the tests name.
const (
	rev2025      = protocol.Revision2025 // 2025-11-25
	revStateless = protocol.Stateless    // 2026-07-28
)

// tapRevision says which revision the trunk spoke to a tapped upstream: the
// protocolVersion of its initialize, or, with no initialize, the
// per-request protocol version of the first request that carries one (the
// 2026-07-28 revision has no handshake). "" when neither was seen.
func tapRevision(tp *tap) string {
	msgs := tp.received()
	for _, m := range msgs {
		if m.Method == "initialize" {
			var p struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			_ = json.Unmarshal(m.Params, &p)
			return p.ProtocolVersion
		}
	}
	for _, m := range msgs {
		if m.Method == "" || len(m.ID) == 0 {
			continue
		}
		var p struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		}
		_ = json.Unmarshal(m.Params, &p)
		var v string
		if json.Unmarshal(p.Meta[protocol.MetaProtocolVersion], &v) == nil && v != "" {
			return v
		}
	}
	return ""
}

// notesPlan exercises mcptrunk-notes (mcp-go) in the revision matrix.
// add_note changes notes://all, and both sides add the same note in the
// same order, so the reads after it still agree.
var notesPlan = diffPlan{
	tools: map[string]map[string]any{
		"search":   {"query": "mcptrunk"},
		"get_note": {"id": "1"},
		"add_note": {"title": "matrix", "body": "added by the revision matrix"},
		"echo":     {"text": "revision matrix ✓"},
		"blob":     {"bytes": 64},
		"rich":     {},
	},
	skip: map[string]string{},
	prompts: map[string]map[string]string{
		"summarize":    {"topic": "revisions"},
		"daily_review": nil,
	},
	templates: map[string]string{"notes://note/{id}": "notes://note/2"},
	normalise: func(_ *testing.T, v any) any { return v },
	must:      []string{"echo", "rich", "summarize"},
}

// tsHost2Line is one line the TypeScript SDK v2 host prints: the first
// describes the connection, each other one a step.
type tsHost2Line struct {
	Connected       bool     `json:"connected"`
	ProtocolVersion string   `json:"protocolVersion"`
	Era             string   `json:"era"`
	Step            string   `json:"step"`
	OK              bool     `json:"ok"`
	IsError         bool     `json:"isError"`
	Names           []string `json:"names"`
	Text            string   `json:"text"`
	Error           string   `json:"error"`
	Code            any      `json:"code"`
	raw             string
}

// runTSHost2 runs testdata/npm/tshost2.mjs with plan as the host of argv
// and returns the lines it printed. The node process and whatever it
// started carry a fresh tag; none may be left afterwards.
func runTSHost2(t *testing.T, ctx context.Context, plan map[string]any, argv ...string) []tsHost2Line {
	t.Helper()
	script := filepath.Join(moduleRoot, "testdata", "npm", "tshost2.mjs")
	if _, err := os.Stat(filepath.Join(npmModules, "@modelcontextprotocol", "client", "package.json")); err != nil {
		t.Fatalf("the TypeScript SDK v2 client is not installed (%v): run `make npm` in %s", err, moduleRoot)
	}
	planJSON, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	tag := newTag(t)
	cmd := exec.CommandContext(ctx, npmNode(t), append([]string{script, string(planJSON), "--"}, argv...)...)
	cmd.Env = append(os.Environ(), tagEnv+"="+tag)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	out, err := cmd.Output()
	var lines []tsHost2Line
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var l tsHost2Line
		if jerr := json.Unmarshal(sc.Bytes(), &l); jerr != nil {
			t.Fatalf("the TypeScript host printed %q: %v", sc.Text(), jerr)
		}
		l.raw = sc.Text()
		lines = append(lines, l)
	}
	if len(lines) == 0 {
		t.Fatalf("the TypeScript host printed nothing: %v\nstderr:\n%s", err, tail(stderr.String(), 3000))
	}
	if !lines[0].Connected {
		t.Fatalf("the TypeScript host could not connect: %s\nstderr:\n%s", lines[0].Error, tail(stderr.String(), 3000))
	}
	if err != nil {
		t.Fatalf("the TypeScript host failed: %v\n%s\nstderr:\n%s", err, out, tail(stderr.String(), 3000))
	}
	assertNoProcesses(t, tag, 15*time.Second)
	return lines
}

// withoutServerInfo removes the serverInfo a 2026-07-28 server names
// itself with in a result's _meta (and the _meta it leaves empty): directly
// that is the upstream, through the trunk the trunk. Everything else in
// _meta is compared.
func withoutServerInfo(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	if meta, ok := m["_meta"].(map[string]any); ok {
		if _, ok := meta[protocol.MetaServerInfo]; ok {
			delete(meta, protocol.MetaServerInfo)
			m["_meta"] = meta
			if len(meta) == 0 {
				delete(m, "_meta")
			}
		}
	}
	return m
}

// crossedHost runs f, in parallel, for each pairing of a host on one
// revision with an upstream held to the other: argv tapped, named name,
// behind a trunk under a go-sdk host at its revision (checked).
func crossedHost(t *testing.T, name string, argv func(t *testing.T) []string, f func(t *testing.T, ctx context.Context, h *host, tp *tap, upstream string)) {
	t.Helper()
	for _, cell := range []struct{ name, host, upstream string }{
		{"host 2025-11-25, upstream 2026-07-28", rev2025, revStateless},
		{"host 2026-07-28, upstream 2025-11-25", revStateless, rev2025},
	} {
		t.Run(cell.name, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t, 90*time.Second)
			srv, tp := tapped(t, argv(t)...)
			srv["protocolVersion"] = cell.upstream
			cfg := writeConfig(t, map[string]server{name: srv}, map[string]any{"startupWait": "60s"})
			h := trunkHost(t, ctx, cfg, hostConfig{}, cell.host)
			if got := h.InitializeResult().ProtocolVersion; got != cell.host {
				t.Fatalf("the host negotiated %s, want %s", got, cell.host)
			}
			f(t, ctx, h, tp, cell.upstream)
		})
	}
}
