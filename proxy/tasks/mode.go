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
	// AsLegacyTask: as a 2025-11-25 task the trunk drives (Drive).
	AsLegacyTask
	// AsExtensionTask: as a 2026-07-28 task the trunk follows (Follow).
	AsExtensionTask
)

// ModeFor says how the trunk must run a call (params) of a tool (its
// definition) of a server whose capabilities are serverCaps, for a host
// whose request declares the extensions hostExtensions: as a task of the
// server's kind when the tool requires one, the server offers tasks and the
// host did not ask for one (no `task` member, the extension not declared).
// A 2026-07-28 host (stateless) gets a 2026-07-28 server's own answer: a
// task when it declared the extension, else the server's -32021 naming it,
// which tells the host to declare it (SEP-2663) rather than hide from it
// the input requests a followed task cannot put to it.
func ModeFor(serverCaps, hostExtensions json.RawMessage, statelessHost bool, params, tool json.RawMessage) Mode {
	legacy, extension := Offers(serverCaps, ""), DeclaresExtension(serverCaps)
	switch {
	case !legacy && !extension, !Required(tool), rawjson.HasField(params, "task"):
		return Direct
	case extension && (statelessHost || rawjson.HasField(hostExtensions, Extension)):
		return Direct // the host follows the task itself, or is told to declare the extension
	case extension:
		return AsExtensionTask
	}
	return AsLegacyTask
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

// ModeOfCall is ModeFor for a host's call of the tool a server names raw,
// its tools read (tools) only when the server offers tasks at all, which
// most do not.
func ModeOfCall(serverCaps json.RawMessage, host translate.HostRequest, tools func() []upstream.Item, raw string, params json.RawMessage) Mode {
	if !OffersAny(serverCaps) {
		return Direct
	}
	for _, tool := range tools() {
		if tool.Key == raw {
			return ModeFor(serverCaps, host.Caps["extensions"], host.Stateless(), params, tool.Raw)
		}
	}
	return Direct
}
