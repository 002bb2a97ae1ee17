package trunktools

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/mcptrunk/mcptrunk/proxy/catalog"
)

// codePrelude declares what every program has besides the tools.
const codePrelude = `// The program is the body of an async function: await, and return a small JSON value.
// A tool's result, as MCP gives it; S is its structuredContent's type when the tool declares one.
interface CallToolResult<S = unknown> {
  content: Array<{ type: string; text?: string; [key: string]: unknown }>;
  structuredContent?: S;
  isError?: boolean;
}
/** Calls a tool by its full name. A refused call throws an Error with the refusal's message. */
declare function call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
/** Collected into the run's result as logs. */
declare const console: { log(...values: unknown[]): void };
`

// declarations describes tools as TypeScript: the prelude, then one
// function per tool in a namespace per server (tools.<server>.<tool>),
// typed from its inputSchema and outputSchema. fns maps each namespace and
// function to the exported name it calls (codemode.Options.Tools). A tool
// whose server or name is no identifier gets one with the other characters
// as _; one that would clash with another is left to call().
func declarations(entries []catalog.Entry) (decl string, fns map[string]map[string]string) {
	var b strings.Builder
	b.WriteString(codePrelude)
	fns = map[string]map[string]string{}
	byServer := map[string][]catalog.Entry{}
	for _, e := range entries {
		byServer[e.Server] = append(byServer[e.Server], e)
	}
	servers := make([]string, 0, len(byServer))
	for s := range byServer {
		servers = append(servers, s)
	}
	slices.Sort(servers)
	b.WriteString("declare namespace tools {\n")
	for _, server := range servers {
		ns := identifier(server)
		if fns[ns] != nil {
			continue
		}
		fns[ns] = map[string]string{}
		fmt.Fprintf(&b, "  namespace %s {\n", ns)
		for _, e := range byServer[server] {
			fn := identifier(e.Raw)
			if _, clash := fns[ns][fn]; clash {
				continue
			}
			fns[ns][fn] = e.Exported
			var tool struct {
				Description  string         `json:"description"`
				InputSchema  map[string]any `json:"inputSchema"`
				OutputSchema map[string]any `json:"outputSchema"`
			}
			_ = json.Unmarshal(e.Item, &tool)
			fmt.Fprintf(&b, "    /** %s (%s) */\n", comment(tool.Description), e.Exported)
			args := "args: " + tsType(tool.InputSchema, 3)
			if req, _ := tool.InputSchema["required"].([]any); len(req) == 0 {
				args = "args?: " + tsType(tool.InputSchema, 3)
			}
			result := "CallToolResult"
			if tool.OutputSchema != nil {
				result = "CallToolResult<" + tsType(tool.OutputSchema, 3) + ">"
			}
			fmt.Fprintf(&b, "    function %s(%s): Promise<%s>;\n", fn, args, result)
		}
		b.WriteString("  }\n")
	}
	b.WriteString("}\n")
	return b.String(), fns
}

var notIdent = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9_$]`) })

// identifier is s as a JavaScript identifier.
func identifier(s string) string {
	s = notIdent().ReplaceAllString(s, "_")
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		s = "_" + s
	}
	return s
}

// comment is a description on one line, safe inside /** */.
func comment(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.ReplaceAll(s, "*/", "* /")
}

// tsType is a JSON Schema as a TypeScript type, as far as depth goes:
// primitives, enums and consts, unions, arrays and objects; what it cannot
// say ($ref, deeper nesting) is unknown.
func tsType(schema any, depth int) string {
	s, ok := schema.(map[string]any)
	if !ok || depth < 0 {
		return "unknown"
	}
	if enum, ok := s["enum"].([]any); ok && len(enum) > 0 {
		lits := make([]string, len(enum))
		for i, v := range enum {
			j, _ := json.Marshal(v)
			lits[i] = string(j)
		}
		return strings.Join(lits, " | ")
	}
	if c, ok := s["const"]; ok {
		j, _ := json.Marshal(c)
		return string(j)
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		if alts, ok := s[key].([]any); ok && len(alts) > 0 {
			types := make([]string, len(alts))
			for i, a := range alts {
				types[i] = tsType(a, depth-1)
			}
			return strings.Join(types, " | ")
		}
	}
	switch typ := s["type"].(type) {
	case []any:
		types := make([]string, 0, len(typ))
		for _, one := range typ {
			alt := map[string]any{}
			for k, v := range s {
				alt[k] = v
			}
			alt["type"] = one
			types = append(types, tsType(alt, depth))
		}
		return strings.Join(types, " | ")
	case string:
		switch typ {
		case "string", "number", "boolean", "null":
			return typ
		case "integer":
			return "number"
		case "array":
			item := tsType(s["items"], depth-1)
			if strings.Contains(item, "|") {
				item = "(" + item + ")"
			}
			return item + "[]"
		case "object":
			return objectType(s, depth)
		}
	}
	if _, ok := s["properties"]; ok {
		return objectType(s, depth)
	}
	return "unknown"
}

func objectType(s map[string]any, depth int) string {
	props, _ := s["properties"].(map[string]any)
	if len(props) == 0 {
		if extra, ok := s["additionalProperties"].(map[string]any); ok {
			return "Record<string, " + tsType(extra, depth-1) + ">"
		}
		return "Record<string, unknown>"
	}
	req := map[string]bool{}
	if r, ok := s["required"].([]any); ok {
		for _, n := range r {
			if name, ok := n.(string); ok {
				req[name] = true
			}
		}
	}
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	slices.Sort(names)
	fields := make([]string, len(names))
	for i, n := range names {
		key := n
		if identifier(n) != n {
			j, _ := json.Marshal(n)
			key = string(j)
		}
		if !req[n] {
			key += "?"
		}
		fields[i] = key + ": " + tsType(props[n], depth-1)
	}
	return "{ " + strings.Join(fields, "; ") + " }"
}
