package extensions

import (
	"bytes"
	"encoding/json"

	"github.com/mcptrunk/mcptrunk/internal/rawjson"
)

// TasksExtension is the identifier of the 2026-07-28 tasks extension.
const TasksExtension = "io.modelcontextprotocol/tasks"

// withheld are the extensions the trunk cannot carry, by identifier, each
// with why. Declaring one either way would be a promise the trunk breaks: a
// host told a server offers it would find no route for its requests, and a
// server told the host takes it could answer with what nobody can reach. So
// such an extension is neither declared to hosts nor passed on to servers.
// None is withheld today: the tasks extension, the last, is routed
// (proxy/tasks.go).
var withheld = map[string]string{}

// carried reports whether the trunk declares and forwards the extension id.
func carried(id string) bool { _, no := withheld[id]; return !no }

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
