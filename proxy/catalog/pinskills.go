package catalog

import (
	"encoding/json"
	"fmt"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/pin"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/naming"
)

// A skill is text the model reads and follows, as a tool's description
// is: one that changes after it was pinned is held to the lockfile the
// same way. Skills are in no list of the catalog (skills/list asks the
// servers when a host asks), so each is checked when listed or got
// (CheckSkill) and recorded by mcptrunk pin, and by serve the first time
// it is seen, as apps are.

// CheckSkill holds one skill entry of server (as the server sent it, its
// own URI) against the lockfile, and says why the host must not get it:
// under enforce, a skill not pinned, or whose files or frontmatter changed
// since (and every skill when the lockfile cannot be used). Under warn a
// changed skill is logged once and kept, and one seen for the first time
// is recorded when serve records first sights.
func (p *Pinner) CheckSkill(server string, skill json.RawMessage) (withheld string) {
	if p.Off() {
		return ""
	}
	uri, _ := rawjson.StringField(skill, "uri")
	now, err := pin.Snapshot(map[pin.Kind][]pin.Def{pin.Skills: {{Key: uri, Raw: skill}}})
	if err != nil || uri == "" {
		return "" // not a skill entry; the host gets it as the server sent it
	}
	entry := now[pin.Skills][uri]
	enforce := p.mode == config.PinEnforce
	p.mu.Lock()
	defer p.mu.Unlock()
	lock, err := p.current()
	switch {
	case err != nil && enforce:
		return unusableLock(err, server)
	case err != nil:
		return "" // reported once by current
	}
	old, pinned := lock.Servers[server][pin.Skills][uri]
	var why string
	switch {
	case pinned && old.SHA256 == entry.SHA256:
		return ""
	case pinned:
		why = fmt.Sprintf("skill %s of server %q is not the one pinned in %s (its files or frontmatter changed): run \"mcptrunk pin %s\" to review and accept it", uri, server, p.path, server)
	case p.record && !enforce:
		p.recordEntry(pin.Skills, server, uri, entry)
		return ""
	default:
		why = fmt.Sprintf("skill %s of server %q is not pinned in %s: run \"mcptrunk pin %s\" to review and accept it", uri, server, p.path, server)
	}
	if enforce {
		return why
	}
	p.once("skill:"+server+uri+entry.SHA256, func() { p.logger.Warn("pinning: " + why) })
	return ""
}

// CheckRead holds what a read of server's uri (its own) answered against
// the lockfile, where pinning covers it: an MCP App's HTML (CheckApp), the
// skill skills/get answers (CheckSkill) and a skill's file
// (checkSkillFile). The error is what the host
// gets instead when it is held back.
func (p *Pinner) CheckRead(method, server, uri string, res json.RawMessage) error {
	switch {
	case naming.IsUIURI(uri):
		return p.checkApp(server, uri, res)
	case method == "skills/get":
		start, end, found, err := rawjson.FieldSpan(res, "skill")
		if err != nil || !found {
			return nil
		}
		if why := p.CheckSkill(server, res[start:end]); why != "" {
			return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "%s", why)
		}
	case method == "resources/read" && naming.IsSkillURI(uri):
		if why := p.checkSkillFile(server, uri, res); why != "" {
			return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "%s", why)
		}
	}
	return nil
}
