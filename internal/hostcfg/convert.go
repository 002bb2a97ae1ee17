package hostcfg

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"sort"
	"strings"

	"github.com/mcptrunk/mcptrunk/internal/config"
)

// Server is one host entry, converted to an mcptrunk mcpServers entry or
// set aside with the reason it cannot be.
type Server struct {
	Name string
	From Location
	// Entry is the mcpServers entry for mcptrunk's config; nil when
	// Problem is set.
	Entry json.RawMessage
	// Problem says why mcptrunk cannot express the entry.
	Problem string
	// Self: the entry runs mcptrunk itself (an earlier install, or one
	// made by hand). It is never imported: mcptrunk would start itself.
	Self bool
	// Type, Command and URL describe the entry for a report. URL is
	// without its query and user info, which may hold credentials.
	Type, Command, URL string
	Disabled           bool
	// Notes say what was changed or left behind on the way.
	Notes []string
}

// entry is an mcpServers entry of mcptrunk's config, in the order its
// fields are written.
type entry struct {
	Type     string            `json:"type,omitempty"`
	Command  string            `json:"command,omitempty"`
	Args     []string          `json:"args,omitempty"`
	Env      map[string]string `json:"env,omitempty"`
	Cwd      string            `json:"cwd,omitempty"`
	URL      string            `json:"url,omitempty"`
	Headers  map[string]string `json:"headers,omitempty"`
	OAuth    *oauthEntry       `json:"oauth,omitempty"`
	Tools    *filterEntry      `json:"tools,omitempty"`
	Timeouts *timeoutsEntry    `json:"timeouts,omitempty"`
	Disabled bool              `json:"disabled,omitempty"`
}

type oauthEntry struct {
	ClientID     string   `json:"clientId,omitempty"`
	ClientSecret string   `json:"clientSecret,omitempty"`
	Scopes       []string `json:"scopes,omitempty"`
	CallbackPort int      `json:"callbackPort,omitempty"`
}

type filterEntry struct {
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
}

type timeoutsEntry struct {
	Connect string `json:"connect,omitempty"`
	Call    string `json:"call,omitempty"`
}

// ignored are fields of the hosts' entries that mean nothing to mcptrunk
// and change nothing about how the server runs, so they are dropped without
// a note.
var ignored = map[string]bool{
	"description": true, // VS Code's registry data
	"gallery":     true,
	"version":     true,
	"source":      true, // Zed: "custom" for an entry written by hand
	"settings":    true, // Zed: an extension's settings (an entry without a command is refused)
}

// converter turns one host entry into an mcptrunk entry, field by field.
type converter struct {
	loc    Location
	c      varContext
	fields map[string]json.RawMessage
	e      entry
	notes  []string
	err    error // the first reason the entry cannot be expressed
}

func (v *converter) fail(format string, args ...any) {
	if v.err == nil {
		v.err = fmt.Errorf(format, args...)
	}
}

// take removes and returns a field.
func (v *converter) take(name string) (json.RawMessage, bool) {
	raw, ok := v.fields[name]
	delete(v.fields, name)
	if ok && isNull(raw) {
		return nil, false
	}
	return raw, ok
}

// str converts a string field's variables to mcptrunk's form.
func (v *converter) str(field string, raw json.RawMessage) string {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		v.fail("%s: want a string", field)
		return ""
	}
	return v.vars(field, s)
}

func (v *converter) vars(field, s string) string {
	out, err := v.loc.Host.vars(s, v.c)
	if err != nil {
		v.fail("%s: %v", field, err)
	}
	return out
}

func (v *converter) strs(field string, raw json.RawMessage) []string {
	var ss []string
	if err := json.Unmarshal(raw, &ss); err != nil {
		v.fail("%s: want an array of strings", field)
		return nil
	}
	for i := range ss {
		ss[i] = v.vars(fmt.Sprintf("%s[%d]", field, i), ss[i])
	}
	return ss
}

// strMap converts env and headers; their values are never quoted.
func (v *converter) strMap(field string, raw json.RawMessage) map[string]string {
	var m map[string]string
	if err := json.Unmarshal(raw, &m); err != nil {
		v.fail("%s: want an object of strings", field)
		return nil
	}
	for k, s := range m {
		m[k] = v.vars(fmt.Sprintf("%s.%s", field, k), s)
	}
	return m
}

func (v *converter) boolean(field string, raw json.RawMessage) bool {
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		v.fail("%s: want true or false", field)
	}
	return b
}

// convert maps one entry of a host's servers to mcptrunk's form.
func convert(loc Location, name string, raw json.RawMessage, c varContext) Server {
	s := Server{Name: name, From: loc}
	v := &converter{loc: loc, c: c}
	if err := json.Unmarshal(raw, &v.fields); err != nil || v.fields == nil {
		s.Problem = "want an object"
		return s
	}
	v.command()
	if raw, ok := v.take("args"); ok {
		v.e.Args = append(v.e.Args, v.strs("args", raw)...)
	}
	if raw, ok := v.take("env"); ok {
		v.e.Env = v.strMap("env", raw)
	}
	if raw, ok := v.take("cwd"); ok {
		v.e.Cwd = v.str("cwd", raw)
	}
	for _, f := range []string{"url", "serverUrl"} { // serverUrl: Windsurf's
		if raw, ok := v.take(f); ok {
			if v.e.URL != "" {
				v.fail(`both "url" and "serverUrl"`)
			}
			v.e.URL = v.str(f, raw)
		}
	}
	if raw, ok := v.take("headers"); ok {
		v.e.Headers = v.strMap("headers", raw)
	}
	v.geminiTransport()
	v.transport()
	v.extras()
	v.geminiExtras()
	v.codexExtras()
	if raw, ok := v.take("disabled"); ok {
		v.e.Disabled = v.boolean("disabled", raw)
	}
	if raw, ok := v.take("enabled"); ok { // Zed's
		v.e.Disabled = !v.boolean("enabled", raw)
	}
	var left []string
	for f := range v.fields {
		if !ignored[f] {
			left = append(left, f)
		}
	}
	sort.Strings(left)
	for _, f := range left {
		v.notes = append(v.notes, fmt.Sprintf("%q is not carried over (mcptrunk has no such setting)", f))
	}

	s.Type, s.Command, s.URL, s.Disabled = v.e.Type, v.e.Command, redactURL(v.e.URL), v.e.Disabled
	if s.Type == "" {
		s.Type = "stdio"
	}
	base := strings.TrimSuffix(path.Base(strings.ReplaceAll(v.e.Command, `\`, "/")), ".exe")
	s.Self = base == "mcptrunk"
	if v.err == nil {
		v.err = validate(name, &v.e)
	}
	if v.err != nil {
		s.Problem = v.err.Error()
		return s
	}
	s.Entry, _ = json.Marshal(v.e) // only strings, maps and slices of them
	s.Notes = append(v.notes, unsetVars(&v.e, c.getenv)...)
	return s
}

// command reads "command": a string, or in Zed's older form an object
// {"path", "args", "env"}.
func (v *converter) command() {
	raw, ok := v.take("command")
	if !ok {
		return
	}
	if b := bytes.TrimSpace(raw); len(b) > 0 && b[0] == '{' {
		var zed struct {
			Path string            `json:"path"`
			Args []string          `json:"args"`
			Env  map[string]string `json:"env"`
		}
		if err := json.Unmarshal(raw, &zed); err != nil {
			v.fail(`command: want a string or {"path", "args", "env"}`)
			return
		}
		v.e.Command = v.vars("command.path", zed.Path)
		for i, a := range zed.Args {
			v.e.Args = append(v.e.Args, v.vars(fmt.Sprintf("command.args[%d]", i), a))
		}
		if len(zed.Env) > 0 {
			v.e.Env = map[string]string{}
			for k, s := range zed.Env {
				v.e.Env[k] = v.vars("command.env."+k, s)
			}
		}
		return
	}
	v.e.Command = v.str("command", raw)
}

// transport settles "type" from the host's value and what the entry has.
func (v *converter) transport() {
	raw, ok := v.take("type")
	if !ok {
		if v.e.Command == "" && v.e.URL == "" {
			if v.loc.Host.ID == "zed" {
				v.fail("no command or url: a server a Zed extension provides, which only Zed can start")
			} else {
				v.fail(`one of "command" or "url" is required`)
			}
		}
		if v.e.URL != "" && v.e.Type == "" {
			v.e.Type = "http"
		}
		return
	}
	var t string
	if err := json.Unmarshal(raw, &t); err != nil {
		v.fail("type: want a string")
		return
	}
	switch strings.ToLower(t) {
	case "stdio", "local":
	case "http", "streamable-http", "streamablehttp", "streamable_http":
		v.e.Type = "http"
	case "sse":
		v.e.Type = "sse"
	default:
		v.fail("type: %q is a transport mcptrunk does not have (it has stdio, http and sse)", t)
	}
}

// extras maps the fields only some hosts have.
func (v *converter) extras() {
	if _, ok := v.take("envFile"); ok { // VS Code, Cursor
		v.fail("envFile: mcptrunk reads no env files; copy its variables into \"env\"")
	}
	if _, ok := v.take("headersHelper"); ok { // Claude Code
		v.fail("headersHelper: mcptrunk runs no command for headers; set them in \"headers\"")
	}
	if raw, ok := v.take("disabledTools"); ok { // Windsurf
		if deny := v.strs("disabledTools", raw); len(deny) > 0 {
			v.tools().Deny = deny
		}
	}
	if raw, ok := v.take("auth"); ok { // Cursor's static OAuth client
		var a struct {
			ID     string   `json:"CLIENT_ID"`
			Secret string   `json:"CLIENT_SECRET"`
			Scopes []string `json:"scopes"`
		}
		if json.Unmarshal(raw, &a) != nil {
			v.fail("auth: want {\"CLIENT_ID\", \"CLIENT_SECRET\", \"scopes\"}")
			return
		}
		v.e.OAuth = &oauthEntry{ClientID: v.vars("auth.CLIENT_ID", a.ID), ClientSecret: v.vars("auth.CLIENT_SECRET", a.Secret), Scopes: a.Scopes}
	}
	if raw, ok := v.take("oauth"); ok { // Claude Code's, named as mcptrunk's
		var o oauthEntry
		if json.Unmarshal(raw, &o) != nil {
			v.fail("oauth: want {\"clientId\", \"callbackPort\"}")
			return
		}
		o.ClientID, o.ClientSecret = v.vars("oauth.clientId", o.ClientID), v.vars("oauth.clientSecret", o.ClientSecret)
		v.e.OAuth = &o
	}
	if _, ok := v.take("dev"); ok { // VS Code's watch and debug settings
		v.notes = append(v.notes, `"dev" (VS Code's watch and debug mode) is not carried over`)
	}
}

// validate checks the entry as mcptrunk's config would, every variable
// counting as set: the values are not known here, only the form.
func validate(name string, e *entry) error {
	b, err := json.Marshal(map[string]any{"mcpServers": map[string]any{name: e}})
	if err != nil {
		return err
	}
	_, err = config.ParseAll(bytes.NewReader(b), placeholder)
	if err != nil {
		return fmt.Errorf("%s", strings.TrimPrefix(err.Error(), fmt.Sprintf("server %q: ", name)))
	}
	return nil
}

// placeholder is a lookup under which every variable is set, to a value
// that passes as a URL too.
func placeholder(string) (string, bool) { return "http://unset.invalid", true }

// unsetVars notes the variables the entry needs that this environment
// lacks: mcptrunk will not start the server until they are set.
func unsetVars(e *entry, getenv func(string) string) []string {
	var missing []string
	seen := map[string]bool{}
	look := func(name string) (string, bool) {
		if !seen[name] {
			seen[name] = true
			if getenv(name) == "" {
				missing = append(missing, name)
			}
		}
		return "x", true
	}
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"x": e}})
	_, _ = config.ParseAll(bytes.NewReader(b), look)
	sort.Strings(missing)
	var out []string
	for _, m := range missing {
		out = append(out, fmt.Sprintf("needs ${%s}, which is not set (or empty) here", m))
	}
	return out
}

// redactURL drops what may be a credential from a URL shown to the user.
func redactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		if i := strings.IndexAny(u, "?#"); i >= 0 {
			return u[:i]
		}
		return u
	}
	p.User, p.RawQuery, p.Fragment = nil, "", ""
	return p.String()
}
