package main

//lint:file-ignore SA1019 roots, sampling and logging are deprecated by the 2026-07-28 revision (SEP-2577), but the trunk still carries them for 2025-era hosts and servers, and these tests keep that working.

// No message the host cannot read: hosts built on the TypeScript SDK (most
// of them: a 10 MiB stdio limit) and on go-sdk (16 MiB) call tools that
// return 1 KiB, 9.9 MiB of text that escapes to twice that, 12 MiB and
// 30 MiB, read a 12 MiB resource and get a 12 MiB log message through the
// trunk's default trunk.maxMessageBytes. Each time the host stays connected
// and gets the whole result or an error naming what was too large, and a
// healthy server answers right after.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// hostLimitStep is one thing a host asks for, and what it must get.
type hostLimitStep struct {
	name  string
	call  string         // a tool
	args  map[string]any // its arguments
	read  string         // or a resource
	whole int            // >0: the whole text of this many bytes; 0: an error naming the limit
}

var hostLimitSteps = []hostLimitStep{
	{name: "1 KiB", call: "mcp__chaos__huge", args: map[string]any{"bytes": 1 << 10}, whole: 1 << 10},
	{name: "9.9 MiB escaping", call: "mcp__chaos__huge", args: map[string]any{"bytes": 10_380_902, "escaping": true}},
	{name: "12 MiB", call: "mcp__chaos__huge", args: map[string]any{"bytes": 12 << 20}},
	{name: "30 MiB", call: "mcp__chaos__huge", args: map[string]any{"bytes": 30 << 20}},
	{name: "9.9 MiB plain", call: "mcp__chaos__huge", args: map[string]any{"bytes": 10_380_902}, whole: 10_380_902},
	{name: "12 MiB resource", read: "mcptrunk://chaos/chaos://huge/" + "12582912"},
	{name: "12 MiB log message", call: "mcp__chaos__huge_log", args: map[string]any{"bytes": 12 << 20}, whole: len("sent a log message of 12582912 bytes")},
}

func hostLimitConfig(t *testing.T) string {
	return writeConfig(t, map[string]server{
		"notes": notesServer(),
		"chaos": chaosServer("-mode", "ok", "-max-life", "120s"),
	}, nil)
}

// checkTooLarge fails unless msg is the trunk's refusal: it names the
// server, the item and the setting.
func checkTooLarge(t *testing.T, step hostLimitStep, msg string) {
	t.Helper()
	item := step.call
	if item == "" {
		item = step.read
	}
	for _, want := range []string{`server "chaos"`, item, "trunk.maxMessageBytes", "bytes"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%s: the error %q does not name %q", step.name, msg, want)
		}
	}
}

func TestHostLimitsTypeScriptHost(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 120*time.Second)
	plan := map[string]any{"healthy": "mcp__notes__echo"}
	var steps []map[string]any
	for _, s := range hostLimitSteps {
		if s.read != "" {
			steps = append(steps, map[string]any{"read": s.read})
		} else {
			steps = append(steps, map[string]any{"call": s.call, "args": s.args})
		}
	}
	plan["steps"] = steps
	planJSON, _ := json.Marshal(plan)
	script := filepath.Join(moduleRoot, "testdata", "npm", "tshost.mjs")
	if _, err := os.Stat(filepath.Join(npmModules, "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		t.Fatalf("the TypeScript SDK is not installed (%v): run `make npm` in %s", err, moduleRoot)
	}
	cmd := exec.CommandContext(ctx, npmNode(t), script, string(planJSON), "--", trunkBin, "serve", "--config", hostLimitConfig(t), "--log-level", "error")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the TypeScript host failed: %v\n%s", err, stderr.String())
	}
	type stepResult struct {
		OK, IsError, Healthy, Connected bool
		Bytes                           int
		Text, Error                     string
		LogBytes                        int
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for i := 0; sc.Scan(); i++ {
		if i >= len(hostLimitSteps) {
			t.Fatalf("more results than steps: %s", sc.Text())
		}
		step := hostLimitSteps[i]
		var r stepResult
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s: %v: %s", step.name, err, sc.Text())
		}
		if !r.Connected || !r.Healthy {
			t.Errorf("%s: the host lost its connection or the healthy server: %s", step.name, sc.Text())
		}
		switch {
		case step.whole > 0:
			if !r.OK || r.IsError || r.Bytes != step.whole {
				t.Errorf("%s: want the whole %d bytes, got %s", step.name, step.whole, sc.Text())
			}
		case step.read != "":
			if r.OK {
				t.Errorf("%s: want an error, got %s", step.name, sc.Text())
			}
			checkTooLarge(t, step, r.Error)
		default:
			if !r.OK || !r.IsError {
				t.Errorf("%s: want a tool error, got %s", step.name, sc.Text())
			}
			checkTooLarge(t, step, r.Text)
		}
		if r.LogBytes > 1<<20 {
			t.Errorf("%s: the host got %d bytes of log messages; the oversized one should have been dropped", step.name, r.LogBytes)
		}
		if i == len(hostLimitSteps)-1 {
			return
		}
	}
	t.Fatalf("the TypeScript host printed fewer results than steps:\n%s\n%s", out, stderr.String())
}

func TestHostLimitsGoHost(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 120*time.Second)
	logs := make(chan int, 16)
	client := mcp.NewClient(&mcp.Implementation{Name: "mcptrunk-limits", Version: "0"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			data, _ := json.Marshal(r.Params.Data)
			select {
			case logs <- len(data):
			default:
			}
		},
	})
	s := dialHost(t, ctx, trunkCmd(newTag(t), "serve", "--config", hostLimitConfig(t), "--log-level", "error"), client, nil, nil, 0)
	for _, step := range hostLimitSteps {
		var text string
		var err error
		isError := false
		if step.read != "" {
			var res *mcp.ReadResourceResult
			if res, err = s.ReadResource(ctx, &mcp.ReadResourceParams{URI: step.read}); err == nil && len(res.Contents) > 0 {
				text = res.Contents[0].Text
			}
		} else {
			var res *mcp.CallToolResult
			if res, err = s.CallTool(ctx, &mcp.CallToolParams{Name: step.call, Arguments: step.args}); err == nil {
				text, isError = toolText(res), res.IsError
			}
		}
		switch {
		case step.whole > 0:
			if err != nil || isError || len(text) != step.whole {
				t.Errorf("%s: want the whole %d bytes, got %d bytes, isError %v, %v", step.name, step.whole, len(text), isError, err)
			}
		case err != nil:
			checkTooLarge(t, step, err.Error())
		default:
			if !isError {
				t.Errorf("%s: want an error, got %d bytes", step.name, len(text))
			}
			checkTooLarge(t, step, text)
		}
		if got := callText(t, ctx, s.ClientSession, "mcp__notes__echo", map[string]any{"text": "alive"}); got != "alive" {
			t.Fatalf("after %s the healthy server answered %q", step.name, got)
		}
	}
	for {
		select {
		case n := <-logs:
			if n > 1<<20 {
				t.Errorf("the host got a log message of %d bytes; the oversized one should have been dropped", n)
			}
		default:
			return
		}
	}
}
