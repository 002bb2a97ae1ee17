package config

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
)

// Limit is one trunk.limits rule: at most Requests requests per Window
// (a token bucket refilled evenly over the window, full at the start),
// or with Daily per calendar day in UTC (a quota, all of it back at
// midnight), counted per each value of By, for the requests it matches.
type Limit struct {
	// Server and Tool are globs (path.Match) on the server's name and the
	// tool's name at its server; "" matches any. A rule with Tool counts
	// only tools/call; one without counts tools/call, prompts/get,
	// resources/read and resources/subscribe of a matching server.
	Server string `json:"server,omitempty"`
	Tool   string `json:"tool,omitempty"`
	// By is what each count is kept for: LimitBySubject (each signed-in
	// caller its own; the default), LimitByServer, LimitByTool. Empty
	// after Parse never: it is [subject] when the config says nothing.
	By       []string `json:"by,omitempty"`
	Requests int      `json:"requests"`
	Window   Duration `json:"window,omitzero"`
	Daily    bool     `json:"daily,omitempty"`
}

// What a limit's count is kept for (Limit.By).
const (
	LimitBySubject = "subject"
	LimitByServer  = "server"
	LimitByTool    = "tool"
)

// limits decodes and checks trunk.limits: an object of named rules, whose
// names the refusals quote.
func (p *fieldErrs) limits(raw json.RawMessage, field string) map[string]Limit {
	if rawAbsent(raw) {
		return nil
	}
	if rawKind(raw) != "object" {
		p.wrongType(field, "object", raw)
		return nil
	}
	var out map[string]Limit
	if err := strictDecode(raw, &out); err != nil {
		p.addf(field, `want {"<name>": {"requests": 20, "window": "1m" or "daily": true, "server": "<glob>", "tool": "<glob>", "by": ["subject"]}}: %v`, err)
		return nil
	}
	for _, name := range sortedMapKeys(out) {
		l := out[name]
		at := field + "." + name
		if name == "" {
			p.addf(field, "a limit needs a name: refusals quote it")
		}
		if l.Requests < 1 {
			p.addf(at+".requests", "must be 1 or more, got %d", l.Requests)
		}
		switch {
		case l.Daily && l.Window != 0:
			p.addf(at, `set window or "daily": true, not both`)
		case !l.Daily && l.Window <= 0:
			p.addf(at+".window", `must be a positive duration such as "1m" (or set "daily": true for a quota per day)`)
		}
		for _, g := range []struct{ f, glob string }{{"server", l.Server}, {"tool", l.Tool}} {
			if _, err := path.Match(g.glob, ""); err != nil {
				p.addf(at+"."+g.f, "bad glob pattern %q: %v", g.glob, err)
			}
		}
		if len(l.By) == 0 {
			l.By = []string{LimitBySubject}
		}
		for i, by := range l.By {
			if !slices.Contains([]string{LimitBySubject, LimitByServer, LimitByTool}, by) {
				p.addf(fmt.Sprintf("%s.by[%d]", at, i), "must be %q, %q or %q, got %q", LimitBySubject, LimitByServer, LimitByTool, by)
			}
		}
		out[name] = l
	}
	return out
}
