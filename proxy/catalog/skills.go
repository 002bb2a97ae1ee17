package catalog

import "encoding/json"

// Skills (io.modelcontextprotocol/skills, proxy/skills): a skill entry
// names its SKILL.md and each of its files by URI, and those URIs are
// namespaced as every resource URI is (skill:// keeps its scheme:
// naming.ResourceURI), so a host reads them back through the trunk.

// NamespaceSkill rewrites a skill entry's uri and its files' (skills/list,
// skills/get); resources "dynamic", not an array, stays.
func NamespaceSkill(server string, skill json.RawMessage) json.RawMessage {
	return rewriteArrayField(namespaceURIField(server, skill), "resources", func(f json.RawMessage) json.RawMessage {
		return namespaceURIField(server, f)
	})
}

// NamespaceSkillResult rewrites the answer to skills/get (its skill) or to
// resources/directory/read (its entries).
func NamespaceSkillResult(method, server string, res json.RawMessage) json.RawMessage {
	if method == "skills/get" {
		return rewriteObjectField(res, "skill", func(s json.RawMessage) json.RawMessage { return NamespaceSkill(server, s) })
	}
	return rewriteArrayField(res, "resources", func(r json.RawMessage) json.RawMessage { return namespaceURIField(server, r) })
}
