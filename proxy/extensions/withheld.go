package extensions

import (
	"bytes"
	"encoding/json"

	"github.com/mcptrunk/mcptrunk/internal/rawjson"
)

// TasksExtension is the identifier of the 2026-07-28 tasks extension.
const TasksExtension = "io.modelcontextprotocol/tasks"

// withheld are the extensions the trunk cannot carry yet, by identifier,
// each with why. Declaring one either way would be a promise the trunk
// breaks: a host told a server offers 2026-07-28 tasks would get -32601
// for its tasks/get (the trunk routes no task of that extension), and a
// server told the host accepts them would answer tools/call with a task
// the host can never reach. So such an extension is neither declared to
// hosts nor passed on to servers; without it a server answers tools/call
// with its result, as to any client that did not declare the extension.
var withheld = map[string]string{
	TasksExtension: "2026-07-28 tasks are not routed by the trunk",
}

// Carried reports whether the trunk declares and forwards the extension id.
func Carried(id string) bool { _, no := withheld[id]; return !no }

// Forwarded is a host's `extensions` member as it reaches servers: as the
// host sent it, byte for byte, without the extensions the trunk withholds.
func Forwarded(member json.RawMessage) json.RawMessage {
	if !mentionsWithheld(member) {
		return member
	}
	ids := make([]string, 0, len(withheld))
	for id := range withheld {
		ids = append(ids, id)
	}
	out, err := rawjson.DeleteFields(bytes.TrimSpace(member), ids...)
	if err != nil {
		return member // not an object: passed on as sent, declaring nothing
	}
	return out
}

// mentionsWithheld is the fast check that leaves most members untouched.
func mentionsWithheld(member []byte) bool {
	for id := range withheld {
		if bytes.Contains(member, []byte(id)) {
			return true
		}
	}
	return false
}
