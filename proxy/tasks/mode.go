package tasks

import (
	"encoding/json"

	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/proxy/translate"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// Mode is how the trunk runs a host's call of a tool.
type Mode int

const (
	// Direct: the call goes as the host made it.
	Direct Mode = iota
	// AsTask2025: as a 2025-11-25 task the trunk drives (drive).
	AsTask2025
	// AsExtensionTask: as a 2026-07-28 task the trunk follows (follow).
	AsExtensionTask
	// toExtension: a 2025-11-25 host's task (the call's task member) on a
	// 2026-07-28 server, created with the extension declared and given to
	// the host as a 2025-11-25 task (createAcross, Route).
	toExtension
	// to2025: a 2026-07-28 host's call, with the extension, of a
	// 2025-11-25 server's task-supporting tool: created as a 2025-11-25
	// task and given to the host as the extension's (createAcross, Route).
	to2025
)

// modeFor says how the trunk must run a call (params) of a tool (its
// definition) of a server whose capabilities are serverCaps, for a host
// whose request declares the extensions hostExtensions. A host that asks
// for a task (a task member; the extension declared) gets one in its own
// model, translated when the server has only the other; a 2025-era host
// that does not, calling a tool that requires a task, has the trunk run the
// task of the server's kind for it. A 2026-07-28 host (stateless) that does
// not declare the extension gets a 2026-07-28 server's own answer to a
// task-only tool, its -32021 naming the extension (SEP-2663: what the
// conformance suite asks of a server), so that it declares it.
func modeFor(serverCaps, hostExtensions json.RawMessage, statelessHost bool, params, tool json.RawMessage) Mode {
	tasks2025, extension := offers(serverCaps, ""), DeclaresExtension(serverCaps)
	switch {
	case !tasks2025 && !extension:
		return Direct
	case rawjson.HasField(params, "task"):
		if !tasks2025 && supports(tool) {
			return toExtension
		}
		return Direct // the host follows the task itself
	case rawjson.HasField(hostExtensions, Extension):
		if !extension && supports(tool) {
			return to2025
		}
		return Direct // the host follows the task itself (or the tool takes none)
	case !required(tool):
		return Direct
	case extension && statelessHost:
		return Direct // the server's -32021 tells the host to declare the extension
	case extension:
		return AsExtensionTask
	}
	return AsTask2025
}

// WithExtension is client capabilities caps with the tasks extension
// declared besides their others: what a server is told of a host the trunk
// follows a task for.
func WithExtension(caps json.RawMessage) json.RawMessage {
	ext := json.RawMessage(`{}`)
	if start, end, found, err := rawjson.FieldSpan(caps, "extensions"); err == nil && found {
		ext = caps[start:end]
	}
	ext, err := rawjson.ReplaceField(ext, Extension, json.RawMessage(`{}`))
	if err != nil {
		return caps
	}
	out, err := rawjson.ReplaceField(caps, "extensions", ext)
	if err != nil {
		return caps
	}
	return out
}

// ModeOfCall is modeFor for a host's call of the tool a server names raw,
// its tools read (tools) only when the server offers tasks at all, which
// most do not.
func ModeOfCall(serverCaps json.RawMessage, host translate.HostRequest, tools func() []upstream.Item, raw string, params json.RawMessage) Mode {
	if !OffersAny(serverCaps) {
		return Direct
	}
	for _, tool := range tools() {
		if tool.Key == raw {
			return modeFor(serverCaps, host.Caps["extensions"], host.Stateless(), params, tool.Raw)
		}
	}
	return Direct
}
