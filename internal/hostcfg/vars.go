package hostcfg

import (
	"fmt"
	"path"
	"strings"
)

// dialect is how a host writes variable references in an entry's strings.
// Each converts a string to mcptrunk's form (${VAR}, ${VAR:-default}, $${
// for a literal "${"), or says why it cannot.
type dialect func(s string, c varContext) (string, error)

// varContext is what a host's variables resolve to.
type varContext struct {
	goos    string
	home    string
	project string // "" for a user-scope file: ${workspaceFolder} has no value
	getenv  func(string) string
}

// mcptrunkVars is Claude Code's dialect: ${VAR} and ${VAR:-default}, as
// mcptrunk writes them.
func mcptrunkVars(s string, _ varContext) (string, error) { return s, nil }

// literalVars is the dialect of hosts that expand nothing (Claude Desktop,
// Zed): a "${" in their entries is text, so it is escaped for mcptrunk.
func literalVars(s string, _ varContext) (string, error) {
	return strings.ReplaceAll(s, "${", "$${"), nil
}

// vscodeVars: ${env:VAR}, ${userHome}, ${workspaceFolder}, ${pathSeparator}
// (${/}), and ${input:id}, a value VS Code prompts the user for.
func vscodeVars(s string, c varContext) (string, error) {
	return editorVars(s, c, "VS Code")
}

// cursorVars: VS Code's, less inputs, plus ${workspaceFolderBasename}.
func cursorVars(s string, c varContext) (string, error) { return editorVars(s, c, "Cursor") }

// windsurfVars: ${env:VAR}, and ${file:PATH} (a file's content).
func windsurfVars(s string, c varContext) (string, error) { return editorVars(s, c, "Windsurf") }

// editorVars converts the ${name} and ${kind:arg} references of the
// editors, which share VS Code's syntax.
func editorVars(s string, c varContext, host string) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		b.WriteString(s[:i])
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return "", fmt.Errorf(`unterminated "${"`)
		}
		ref := s[i+2 : i+end]
		s = s[i+end+1:]
		kind, arg, _ := strings.Cut(ref, ":")
		switch {
		case kind == "env" && validVarName(arg):
			b.WriteString("${" + arg + "}")
		case kind == "input":
			return "", fmt.Errorf("${input:%s} is a value %s prompts for; mcptrunk cannot prompt: put it in an environment variable and write ${NAME}", arg, host)
		case kind == "file":
			return "", fmt.Errorf("${file:...} reads a file's content, which mcptrunk cannot do: put it in an environment variable and write ${NAME}")
		case ref == "userHome":
			b.WriteString(escape(c.home))
		case ref == "workspaceFolder" || ref == "workspaceRoot" || ref == "workspaceFolderBasename":
			if c.project == "" {
				return "", fmt.Errorf("${%s} in a user-scope file has no project to stand for", ref)
			}
			if ref == "workspaceFolderBasename" {
				b.WriteString(escape(path.Base(strings.ReplaceAll(c.project, `\`, "/"))))
			} else {
				b.WriteString(escape(c.project))
			}
		case ref == "pathSeparator" || ref == "/":
			b.WriteString(map[bool]string{true: `\`, false: "/"}[c.goos == "windows"])
		default:
			return "", fmt.Errorf("${%s} is not a variable mcptrunk knows", ref)
		}
	}
}

// escape makes literal text safe from mcptrunk's expansion.
func escape(s string) string { return strings.ReplaceAll(s, "${", "$${") }

// validVarName: [A-Za-z_][A-Za-z0-9_]*, the names mcptrunk expands.
func validVarName(name string) bool {
	for i, c := range name {
		switch {
		case c == '_', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return name != ""
}
