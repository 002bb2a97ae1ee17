package hostcfg

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Gemini CLI keeps its servers in settings.json's mcpServers, in the
// user's ~/.gemini and in a project's .gemini. Its entries differ from the
// other hosts' in three ways this file handles: the transport is chosen by
// the field that holds the address (httpUrl: streamable HTTP; url: the
// older SSE), the request timeout is a number of milliseconds, and the
// tools are filtered with includeTools and excludeTools.

// geminiTransport reads httpUrl, and says that a url without a type is
// SSE, as Gemini CLI takes it. Runs before transport().
func (v *converter) geminiTransport() {
	if v.loc.Host.ID != "gemini" {
		return
	}
	if raw, ok := v.take("httpUrl"); ok {
		if v.e.URL != "" {
			v.fail(`both "url" and "httpUrl": Gemini CLI uses one of them`)
			return
		}
		v.e.URL = v.str("httpUrl", raw)
		v.e.Type = "http"
		return
	}
	if _, typed := v.fields["type"]; v.e.URL != "" && !typed {
		v.e.Type = "sse"
	}
}

// geminiExtras maps timeout, trust, includeTools and excludeTools.
func (v *converter) geminiExtras() {
	if v.loc.Host.ID != "gemini" {
		return
	}
	if raw, ok := v.take("timeout"); ok {
		var ms int64
		if err := json.Unmarshal(raw, &ms); err != nil || ms <= 0 {
			v.fail("timeout: want a positive number of milliseconds")
		} else {
			v.e.Timeouts = &timeoutsEntry{Call: fmt.Sprintf("%dms", ms)}
		}
	}
	if raw, ok := v.take("includeTools"); ok {
		if allow := v.strs("includeTools", raw); len(allow) > 0 {
			v.tools().Allow = allow
		}
	}
	if raw, ok := v.take("excludeTools"); ok {
		if deny := v.strs("excludeTools", raw); len(deny) > 0 {
			v.tools().Deny = append(v.tools().Deny, deny...)
		}
	}
	if _, ok := v.take("trust"); ok {
		v.notes = append(v.notes, `"trust" (Gemini CLI's calls without confirmation) is not carried over: `+
			`confirmations are Gemini CLI's, so set it on the mcptrunk entry if you want it for every server`)
	}
}

// tools is the entry's tool filter, made when first needed.
func (v *converter) tools() *filterEntry {
	if v.e.Tools == nil {
		v.e.Tools = &filterEntry{}
	}
	return v.e.Tools
}

// geminiVars: Gemini CLI expands $VAR and ${VAR} in every string of its
// settings. Anything else after a "$" is text.
func geminiVars(s string, _ varContext) (string, error) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	var b strings.Builder
	for len(s) > 0 {
		i := strings.IndexByte(s, '$')
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		s = s[i+1:]
		if strings.HasPrefix(s, "{") {
			end := strings.IndexByte(s, '}')
			if end > 0 && validVarName(s[1:end]) {
				b.WriteString("${" + s[1:end] + "}")
				s = s[end+1:]
				continue
			}
			b.WriteString("$$") // a literal "${" for mcptrunk
			continue
		}
		n := 0
		for n < len(s) && validVarName(s[:n+1]) {
			n++
		}
		if n == 0 {
			b.WriteByte('$')
			continue
		}
		b.WriteString("${" + s[:n] + "}")
		s = s[n:]
	}
	return b.String(), nil
}

// InstallAdvice says what else in the host's installed file would keep it
// from starting the entry named name: Gemini CLI connects only the servers
// its mcp.allowed lists, when it has one, and never those mcp.excluded
// lists. Nothing is changed there: those lists are the user's policy.
func InstallAdvice(loc Location, installed []byte, name string) []string {
	if loc.Host.ID != "gemini" {
		return nil
	}
	data, err := plain(loc.Host, installed)
	if err != nil {
		return nil
	}
	var settings struct {
		MCP struct {
			Allowed  *[]string `json:"allowed"`
			Excluded []string  `json:"excluded"`
		} `json:"mcp"`
	}
	if json.Unmarshal(data, &settings) != nil {
		return nil
	}
	var advice []string
	if a := settings.MCP.Allowed; a != nil && !slices.Contains(*a, name) {
		advice = append(advice, fmt.Sprintf("Gemini CLI connects only the servers in mcp.allowed of %s, and %q is not among them: add it there", loc.Path, name))
	}
	if slices.Contains(settings.MCP.Excluded, name) {
		advice = append(advice, fmt.Sprintf("mcp.excluded of %s lists %q, so Gemini CLI will not connect it: take it out there", loc.Path, name))
	}
	return advice
}
