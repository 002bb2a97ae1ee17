package registry

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// ConfigEntry is a server entry of mcptrunk's config, as add writes it.
type ConfigEntry struct {
	Type    string            `json:"type,omitempty"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

// Variable is an environment variable the entry refers to (${NAME}): a
// value the user gives where mcptrunk runs, never written in the config.
type Variable struct {
	Name        string
	Description string
	Required    bool
	Secret      bool
}

// Plan is how a server of the registry becomes an entry.
type Plan struct {
	Entry ConfigEntry
	// Via says what the entry runs or reaches: "npm @scope/pkg@1.2.0",
	// "remote https://...".
	Via string
	// Variables are those the entry refers to, required ones first.
	Variables []Variable
}

// runners are the commands that run a package of each registry type, and
// how its identifier and version become their argument.
var runners = map[string]struct {
	command string
	before  []string // before the runtime arguments
	ref     func(id, version string) []string
}{
	"npm":   {"npx", nil, func(id, v string) []string { return []string{"-y", join(id, "@", v)} }},
	"pypi":  {"uvx", nil, func(id, v string) []string { return []string{join(id, "==", v)} }},
	"nuget": {"dnx", nil, func(id, v string) []string { return []string{join(id, "@", v), "--yes"} }},
	"oci": {"docker", []string{"run", "-i", "--rm"}, func(id, v string) []string {
		if strings.Contains(id[strings.LastIndex(id, "/")+1:], ":") || strings.Contains(id, "@sha256:") {
			return []string{id} // the reference has its tag already
		}
		return []string{join(id, ":", v)}
	}},
}

func join(id, sep, version string) string {
	if version == "" || version == "latest" {
		return id
	}
	return id + sep + version
}

// PlanEntry chooses how to run s: its first package that runs over stdio
// with a runner mcptrunk knows, else its first remote. The error says why
// none will do.
func PlanEntry(s Server) (*Plan, error) {
	var why []string
	for _, p := range s.Packages {
		plan, err := planPackage(p)
		if err == nil {
			return plan, nil
		}
		why = append(why, err.Error())
	}
	for _, r := range s.Remotes {
		plan, err := planRemote(r)
		if err == nil {
			return plan, nil
		}
		why = append(why, err.Error())
	}
	if len(why) == 0 {
		return nil, fmt.Errorf("server %q lists no package and no remote", s.Name)
	}
	return nil, fmt.Errorf("server %q cannot be added: %s", s.Name, strings.Join(why, "; "))
}

func planPackage(p Package) (*Plan, error) {
	r, ok := runners[p.RegistryType]
	if !ok {
		return nil, fmt.Errorf("package %s is of type %q, which mcptrunk cannot run (it runs npm, pypi, oci and nuget)", p.Identifier, p.RegistryType)
	}
	if t := p.Transport.Type; t != "" && t != "stdio" {
		return nil, fmt.Errorf("package %s serves %s on a local port, which mcptrunk would have to start and then reach: add it by hand", p.Identifier, t)
	}
	if p.Identifier == "" {
		return nil, errors.New("a package without an identifier")
	}
	v := newVars()
	args := append([]string{}, r.before...)
	args = append(args, v.arguments(p.RuntimeArguments)...)
	env := map[string]string{}
	for _, e := range p.EnvironmentVariables {
		if ref := v.env(e); ref != "" {
			env[e.Name] = ref
		}
		if p.RegistryType == "oci" { // the container sees only what docker passes in
			args = append(args, "-e", e.Name)
		}
	}
	args = append(args, r.ref(p.Identifier, p.Version)...)
	args = append(args, v.arguments(p.PackageArguments)...)
	plan := &Plan{Entry: ConfigEntry{Command: r.command, Args: args}, Via: p.RegistryType + " " + join(p.Identifier, "@", p.Version), Variables: v.list()}
	if len(env) > 0 {
		plan.Entry.Env = env
	}
	return plan, nil
}

func planRemote(r Remote) (*Plan, error) {
	typ := map[string]string{"streamable-http": "http", "http": "http", "sse": "sse"}[r.Type]
	if typ == "" {
		return nil, fmt.Errorf("remote %s is of type %q, which mcptrunk does not speak (it speaks streamable-http and sse)", r.URL, r.Type)
	}
	v := newVars()
	plan := &Plan{Entry: ConfigEntry{Type: typ, URL: v.fill(r.URL, r.Variables)}, Via: "remote " + r.URL}
	for _, h := range r.Headers {
		if plan.Entry.Headers == nil {
			plan.Entry.Headers = map[string]string{}
		}
		if h.Value != "" {
			plan.Entry.Headers[h.Name] = v.fill(h.Value, nil)
		} else {
			plan.Entry.Headers[h.Name] = v.ref(Variable{Name: envName(h.Name), Description: h.Description, Required: h.IsRequired, Secret: h.IsSecret}, h.Default)
		}
	}
	plan.Variables = v.list()
	return plan, nil
}

// vars collects the variables an entry refers to.
type vars map[string]Variable

func newVars() vars { return vars{} }

// ref is the reference to variable x, noted: ${NAME}, or with its default.
func (v vars) ref(x Variable, def string) string {
	if old, ok := v[x.Name]; ok {
		x.Required = x.Required || old.Required
	}
	v[x.Name] = x
	if def != "" {
		return "${" + x.Name + ":-" + escape(def) + "}"
	}
	return "${" + x.Name + "}"
}

// env is the value of an environment variable of a package: a reference
// to the variable of the same name where mcptrunk runs ("" for an optional
// one without a default: the server reads mcptrunk's environment anyway).
func (v vars) env(e Input) string {
	x := Variable{Name: e.Name, Description: e.Description, Required: e.IsRequired, Secret: e.IsSecret}
	if e.Value != "" {
		return v.fill(e.Value, nil)
	}
	if !e.IsRequired && e.Default == "" {
		v[x.Name] = x
		return ""
	}
	return v.ref(x, e.Default)
}

// placeholder is a {name} in a value of server.json.
var placeholder = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_.-]*)\}`)
})

// fill turns the {name} placeholders of s into ${NAME} references.
func (v vars) fill(s string, defs map[string]Input) string {
	s = escape(s)
	return placeholder().ReplaceAllStringFunc(s, func(m string) string {
		name := m[1 : len(m)-1]
		in := defs[name]
		return v.ref(Variable{Name: envName(name), Description: in.Description, Required: in.IsRequired || in.Default == "", Secret: in.IsSecret}, in.Default)
	})
}

// arguments are the command-line arguments of args, their placeholders
// as references.
func (v vars) arguments(args []Argument) []string {
	var out []string
	for _, a := range args {
		value := a.Value
		if value == "" {
			value = a.Default
		}
		if value == "" && a.ValueHint != "" && a.IsRequired {
			value = "{" + a.ValueHint + "}"
		}
		if a.Type == "named" {
			out = append(out, a.Name)
		}
		if value != "" {
			out = append(out, v.fill(value, a.Variables))
		}
	}
	return out
}

// list is the variables, required ones first, each group by name.
func (v vars) list() []Variable {
	out := make([]Variable, 0, len(v))
	for _, x := range v {
		out = append(out, x)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Required != out[j].Required {
			return out[i].Required
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// envName is an environment variable's name for a placeholder or header:
// upper case, anything but letters and digits an underscore.
func envName(s string) string {
	b := []byte(strings.ToUpper(s))
	for i, c := range b {
		if !('A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			b[i] = '_'
		}
	}
	if len(b) > 0 && '0' <= b[0] && b[0] <= '9' {
		return "_" + string(b)
	}
	return string(b)
}

// escape keeps a "${" of server.json's text from being expanded.
func escape(s string) string { return strings.ReplaceAll(s, "${", "$${") }
