package catalog

import (
	"fmt"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/logkey"
	"github.com/mcptrunk/mcptrunk/internal/pin"
)

// An MCP App's HTML is code the host runs, as a tool's description is
// text the model reads: a server that changes it after it was pinned is
// held to the lockfile the same way. The HTML is not in any list, so it is
// checked when read (CheckApp) and recorded by mcptrunk pin, and by serve
// the first time a server's apps are read.

// checkApp holds the read of the app uri (the server's own URI) against
// the lockfile. It returns the error the host gets when the app is held
// back: under enforce, an app whose HTML differs from the one pinned, or
// that is not pinned. Under warn a changed app is logged once and the read
// goes on, and an app read for the first time is recorded when serve
// records first sights (a new app is also a new resource, which pinning
// reports as drift of the catalog).
func (p *Pinner) checkApp(server, uri string, result []byte) error {
	if p.Off() {
		return nil
	}
	now, err := pin.AppEntry(uri, result)
	if err != nil {
		return nil // not a read result; the host gets it as the server sent it
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	lock, err := p.current()
	if err != nil {
		return nil // reported once by current; nothing to hold against
	}
	old, pinned := lock.Servers[server][pin.Apps][uri]
	var why string
	switch {
	case pinned && old.SHA256 == now.SHA256:
		return nil
	case pinned:
		why = fmt.Sprintf("app %s of server %q is not the one pinned in %s (its HTML changed): run \"mcptrunk pin %s\" to review and accept it", uri, server, p.path, server)
	case p.record && p.mode != config.PinEnforce:
		p.recordEntry(pin.Apps, server, uri, now)
		return nil
	default:
		why = fmt.Sprintf("app %s of server %q is not pinned in %s: run \"mcptrunk pin %s\" to review and accept it", uri, server, p.path, server)
	}
	if p.mode == config.PinEnforce {
		return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "%s", why)
	}
	p.once("app:"+server+uri+now.SHA256, func() { p.logger.Warn("pinning: " + why) })
	return nil
}

// recordEntry records an app or a skill seen for the first time.
func (p *Pinner) recordEntry(kind pin.Kind, server, key string, e pin.Entry) {
	err := pin.Update(p.path, func(l *pin.Lock) error {
		s := l.Servers[server]
		if s == nil {
			s = pin.Server{}
			l.Servers[server] = s
		}
		if s[kind] == nil {
			s[kind] = map[string]pin.Entry{}
		}
		s[kind][key] = e
		return nil
	})
	if err != nil {
		p.once("record-"+string(kind)+":"+server+err.Error(), func() {
			p.logger.Warn("pinning: recording failed", "server", server, "kind", kind.Singular(), "name", logkey.Clip(key), "error", err)
		})
		return
	}
	p.logger.Info("pinning: recorded what was seen for the first time", "server", server, "kind", kind.Singular(), "name", logkey.Clip(key), "lockFile", p.path)
	p.loaded = false
}
