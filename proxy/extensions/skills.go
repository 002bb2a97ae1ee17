package extensions

import (
	"encoding/json"

	"github.com/mcptrunk/mcptrunk/internal/rawjson"
)

// SkillsExtension is the identifier of the skills extension (SEP-2640),
// which proxy/skills carries.
const SkillsExtension = "io.modelcontextprotocol/skills"

func init() { merges[SkillsExtension] = mergeSkills }

// mergeSkills declares directoryRead when any server serves
// resources/directory/read: the trunk sends each such read to the server
// its URI names, and one without it answers that it has no such method.
func mergeSkills(settings []json.RawMessage) json.RawMessage {
	for _, s := range settings {
		if v, err := rawjson.Object(s); err == nil && string(v["directoryRead"]) == "true" {
			return json.RawMessage(`{"directoryRead":true}`)
		}
	}
	return json.RawMessage(`{}`)
}
