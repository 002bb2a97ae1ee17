package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mcptrunk/mcptrunk/naming"
)

// fieldErrs collects validation errors for one server or for the trunk
// options.
type fieldErrs struct {
	prefix string // e.g. `server "x": `
	errs   []error
}

func (p *fieldErrs) addf(field, format string, args ...any) {
	p.add(field, fmt.Errorf(format, args...))
}

func (p *fieldErrs) add(field string, err error) {
	if field == "" {
		p.errs = append(p.errs, fmt.Errorf("%s%w", p.prefix, err))
		return
	}
	p.errs = append(p.errs, fmt.Errorf("%s%s: %w", p.prefix, field, err))
}

// wrongType records that field has the wrong JSON type. The value itself is
// not included: it may be a secret.
func (p *fieldErrs) wrongType(field, want string, raw []byte) {
	p.addf(field, "want %s, got %s", want, rawKind(raw))
}

// rawAbsent reports whether raw is a missing field or JSON null.
func rawAbsent(raw []byte) bool {
	k := rawKind(raw)
	return k == "" || k == "null"
}

// str decodes a string field. ok is false if it had the wrong type.
func (p *fieldErrs) str(raw json.RawMessage, field string) (s string, ok bool) {
	if rawAbsent(raw) {
		return "", true
	}
	if rawKind(raw) != "string" || json.Unmarshal(raw, &s) != nil {
		p.wrongType(field, "string", raw)
		return "", false
	}
	return s, true
}

// strs decodes an array of strings; each bad element is reported.
func (p *fieldErrs) strs(raw json.RawMessage, field string) ([]string, bool) {
	if rawAbsent(raw) {
		return nil, true
	}
	var elems []json.RawMessage
	if rawKind(raw) != "array" || json.Unmarshal(raw, &elems) != nil {
		p.wrongType(field, "array of strings", raw)
		return nil, false
	}
	out := make([]string, 0, len(elems))
	ok := true
	for i, e := range elems {
		s, eok := p.str(e, fmt.Sprintf("%s[%d]", field, i))
		ok = ok && eok
		out = append(out, s)
	}
	return out, ok
}

// strMap decodes an object of strings; each bad value is reported.
func (p *fieldErrs) strMap(raw json.RawMessage, field string) (map[string]string, bool) {
	if rawAbsent(raw) {
		return nil, true
	}
	var elems map[string]json.RawMessage
	if rawKind(raw) != "object" || json.Unmarshal(raw, &elems) != nil {
		p.wrongType(field, "object of strings", raw)
		return nil, false
	}
	out := make(map[string]string, len(elems))
	ok := true
	for _, k := range sortedMapKeys(elems) {
		s, eok := p.str(elems[k], keyField(field, k))
		ok = ok && eok
		out[k] = s
	}
	return out, ok
}

func (p *fieldErrs) boolean(raw json.RawMessage, field string) bool {
	if rawAbsent(raw) {
		return false
	}
	var b bool
	if rawKind(raw) != "boolean" || json.Unmarshal(raw, &b) != nil {
		p.wrongType(field, "boolean", raw)
	}
	return b
}

func (p *fieldErrs) integer(raw json.RawMessage, field string) (int, bool) {
	if rawAbsent(raw) {
		return 0, true
	}
	var n int
	if rawKind(raw) != "number" || json.Unmarshal(raw, &n) != nil {
		p.wrongType(field, "integer", raw)
		return 0, false
	}
	return n, true
}

func (p *fieldErrs) duration(raw json.RawMessage, field string) Duration {
	if rawAbsent(raw) {
		return 0
	}
	var d Duration
	if err := d.UnmarshalJSON(raw); err != nil {
		if _, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
			p.addf(field, `want a duration string such as "30s", got %s`, rawKind(raw))
		} else {
			p.add(field, err)
		}
		return 0
	}
	return d
}

// object decodes an object into v (a struct of json.RawMessage fields).
func (p *fieldErrs) object(raw json.RawMessage, field string, v any) bool {
	if rawAbsent(raw) {
		return false
	}
	if rawKind(raw) != "object" || json.Unmarshal(raw, v) != nil {
		p.wrongType(field, "object", raw)
		return false
	}
	return true
}

// requiredObject is object for a value that must be there: left out (or
// null) is the same error as a value of another kind.
func (p *fieldErrs) requiredObject(raw json.RawMessage, field string, v any) bool {
	if rawAbsent(raw) {
		p.wrongType(field, "object", raw)
		return false
	}
	return p.object(raw, field, v)
}

// filter decodes and validates an allow/deny filter.
func (p *fieldErrs) filter(raw json.RawMessage, field string) Filter {
	var rf rawFilter
	if !p.object(raw, field, &rf) {
		return Filter{}
	}
	allow, _ := p.strs(rf.Allow, field+".allow")
	deny, _ := p.strs(rf.Deny, field+".deny")
	p.patterns(allow, field+".allow")
	p.patterns(deny, field+".deny")
	return Filter{Allow: nilIfEmptyStrings(allow), Deny: nilIfEmptyStrings(deny)}
}

func (p *fieldErrs) patterns(pats []string, field string) {
	for i, pat := range pats {
		f := fmt.Sprintf("%s[%d]", field, i)
		if pat == "" {
			p.addf(f, "empty pattern")
			continue
		}
		if _, err := path.Match(pat, ""); err != nil {
			p.addf(f, "bad glob pattern %q: %w", pat, err)
		}
	}
}

func (p *fieldErrs) timeouts(raw json.RawMessage, field string) Timeouts {
	var t Timeouts
	var rt rawTimeouts
	if p.object(raw, field, &rt) {
		t.Connect = p.duration(rt.Connect, field+".connect")
		t.List = p.duration(rt.List, field+".list")
		t.Call = p.duration(rt.Call, field+".call")
		t.Restart = p.duration(rt.Restart, field+".restart")
	}
	if t.Connect == 0 {
		t.Connect = Duration(defaultConnectTimeout)
	}
	if t.List == 0 {
		t.List = Duration(defaultListTimeout)
	}
	if t.Call == 0 {
		t.Call = Duration(defaultCallTimeout)
	}
	if t.Restart == 0 {
		t.Restart = Duration(defaultRestartWait)
	}
	return t
}

// protection decodes maxInFlight, maxQueued and breaker (a remote
// server's only: a stdio server that fails is restarted instead).
func (p *fieldErrs) protection(rs rawServer, s *Spec) {
	if n, ok := p.integer(rs.MaxInFlight, "maxInFlight"); ok && n < 0 {
		p.addf("maxInFlight", "must be 0 (no cap) or more, got %d", n)
	} else {
		s.MaxInFlight = n
	}
	if n, ok := p.integer(rs.MaxQueued, "maxQueued"); ok && !rawAbsent(rs.MaxQueued) {
		switch {
		case n < 1:
			p.addf("maxQueued", "must be 1 or more, got %d", n)
		case rawAbsent(rs.MaxInFlight):
			p.addf("maxQueued", "needs maxInFlight: only calls past that cap wait")
		default:
			s.MaxQueued = n
		}
	}
	var rb rawBreaker
	if !p.object(rs.Breaker, "breaker", &rb) {
		return
	}
	if s.Type == TransportStdio {
		p.addf("breaker", `only for remote servers (type "http" or "sse"): a stdio server is restarted when it fails`)
	}
	if n, ok := p.integer(rb.Failures, "breaker.failures"); ok {
		if n < 1 {
			p.addf("breaker.failures", "must be 1 or more (consecutive failures that open the breaker), got %d", n)
		}
		s.Breaker.Failures = n
	}
	s.Breaker.Cooldown = p.duration(rb.Cooldown, "breaker.cooldown")
	if s.Breaker.Cooldown == 0 {
		s.Breaker.Cooldown = Duration(DefaultBreakerCooldown)
	}
}

// expand expands variables in s, recording an error naming field on failure.
func (p *fieldErrs) expand(field, s string, lookup func(string) (string, bool)) (string, bool) {
	v, err := Expand(s, lookup)
	if err != nil {
		p.add(field, err)
		return "", false
	}
	return v, true
}

// checkURL validates an expanded url without ever quoting it: it may carry
// a secret (an API key in the query, or user:password).
func (p *fieldErrs) checkURL(u string) {
	if u == "" {
		p.addf("url", "empty after variable expansion")
		return
	}
	pu, err := url.Parse(u)
	if err != nil {
		p.addf("url", "not a valid URL")
		return
	}
	if pu.Scheme != "http" && pu.Scheme != "https" {
		p.addf("url", "must be an absolute http:// or https:// URL")
		return
	}
	if pu.Host == "" {
		p.addf("url", "missing host")
	}
}

// rawKind names the JSON type of raw: "object", "array", "string",
// "number", "boolean", "null", or "" when raw is empty (a missing field).
func rawKind(raw []byte) string {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return ""
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// decodeRawObject returns the keys and values of a JSON object in document
// order, duplicates included.
func decodeRawObject(raw json.RawMessage) ([]string, []json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // '{'
		return nil, nil, err
	}
	var keys []string
	var vals []json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return keys, vals, err
		}
		k, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return keys, vals, err
		}
		keys = append(keys, k)
		vals = append(vals, v)
	}
	return keys, vals, nil
}

// syntaxPosition converts a json.SyntaxError offset (bytes read when the error was
// found) to a 1-based line and column (in characters) of the offending byte.
func syntaxPosition(data []byte, offset int64) (line, col int) {
	pos := int(offset) - 1
	pos = max(0, min(pos, len(data)))
	before := data[:pos]
	line = 1 + bytes.Count(before, []byte("\n"))
	lineStart := bytes.LastIndexByte(before, '\n') + 1
	col = 1 + utf8.RuneCount(before[lineStart:])
	return line, col
}

func sortedMapKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// keyField formats the path of a map entry: headers.Authorization, or
// headers["odd key"] when the key is not a plain identifier.
func keyField(field, key string) string {
	plain := key != ""
	for _, c := range key {
		if !(c == '_' || c == '-' || c == '.' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			plain = false
			break
		}
	}
	if plain {
		return field + "." + key
	}
	return fmt.Sprintf("%s[%q]", field, key)
}

// validHeaderName reports whether name is an RFC 9110 token.
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// checkServerID applies the naming rules to a server's name (no "__", not
// "trunk", ...) and rejects two names that normalise to the same id; ids
// maps the ids seen so far to their names.
func checkServerID(name string, ids map[string]string) []error {
	id, err := naming.ServerID(name)
	if err != nil {
		return []error{err}
	}
	if other, dup := ids[id]; dup {
		return []error{fmt.Errorf("server %q: its name collides with server %q (both become %q in exported names)", name, other, id)}
	}
	ids[id] = name
	return nil
}
