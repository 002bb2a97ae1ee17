package hostcfg

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/mcptrunk/mcptrunk/internal/wording"
	"github.com/mcptrunk/mcptrunk/naming"
)

// ImportPlan is what an import (mcptrunk import) found in the hosts' files
// and would do to mcptrunk's config.
type ImportPlan struct {
	cfgPath    string
	cfg        []byte // the config's bytes; nil when it does not exist yet
	files      []importedFile
	looked     []Location // every file looked for, found or not
	Add        []Server   // the servers to add
	Unreadable int        // files that exist but cannot be read or parsed
}

// importedFile is one host file and what became of each of its servers.
type importedFile struct {
	loc     Location
	missing bool
	err     error
	servers []importedServer
}

// importedServer is one entry and its fate.
type importedServer struct {
	Server
	outcome outcome
	why     string // for set aside, same and clash
}

type outcome int

const (
	outAdd     outcome = iota
	outSame            // mcptrunk's config (or a host read before) already has it, the same
	outClash           // the name is taken by a different entry, which is kept
	outRefused         // mcptrunk cannot express it
	outSelf            // it runs mcptrunk
)

// PlanImport reads every location and decides, server by server, what the
// config at cfgPath gains. A config that exists but does not parse is an
// error: nothing is added to a file mcptrunk cannot read. showMissing: say
// so of a file that does not exist (one asked for by name).
func PlanImport(cfgPath string, locs []Location, sys Env, showMissing bool) (*ImportPlan, error) {
	plan := &ImportPlan{cfgPath: cfgPath, looked: locs}
	data, err := os.ReadFile(cfgPath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		if err := ValidateConfig(data, os.LookupEnv); err != nil {
			return nil, fmt.Errorf("mcptrunk's config %s does not parse; nothing is added to it until it does:\n%w", cfgPath, err)
		}
		plan.cfg = data
	}
	existing, err := ConfigServers(plan.cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfgPath, err)
	}
	ids := map[string]string{} // server id → what holds it, for names that normalise alike
	for name := range existing {
		if id, err := naming.ServerID(name); err == nil {
			ids[id] = "mcptrunk's config"
		}
	}
	planned := map[string]Server{}
	for _, loc := range locs {
		f := importedFile{loc: loc}
		servers, err := ReadFile(loc, os.ReadFile, sys)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			f.missing = true
			if !showMissing {
				continue
			}
		case err != nil:
			f.err = err
			plan.Unreadable++
		}
		for _, s := range servers {
			is := importedServer{Server: s}
			id, _ := naming.ServerID(s.Name)
			switch prev, dup := planned[s.Name]; {
			case s.Self:
				is.outcome = outSelf
			case s.Problem != "":
				is.outcome, is.why = outRefused, s.Problem
			case existing[s.Name] != nil && SameEntry(existing[s.Name], s.Entry):
				is.outcome, is.why = outSame, "already in mcptrunk's config"
			case existing[s.Name] != nil:
				is.outcome, is.why = outClash, "mcptrunk's config has a different entry of this name; it is kept"
			case dup && SameEntry(prev.Entry, s.Entry):
				is.outcome, is.why = outSame, "the same as in "+describe(prev.From)
			case dup:
				is.outcome, is.why = outClash, "a different entry of this name comes from "+describe(prev.From)+"; that one is kept"
			case ids[id] != "":
				is.outcome, is.why = outClash, fmt.Sprintf("its name becomes %q in tool names, as a server's in %s does; that one is kept", id, ids[id])
			default:
				planned[s.Name] = s
				ids[id] = describe(loc)
				plan.Add = append(plan.Add, s)
			}
			f.servers = append(f.servers, is)
		}
		plan.files = append(plan.files, f)
	}
	return plan, nil
}

// describe names a location for the report: the host, the scope and the
// file.
func describe(loc Location) string {
	return fmt.Sprintf("%s (%s) %s", loc.Host.Name, loc.Scope, loc.Path)
}

// Print writes the report: per file, each server with its type and command
// or URL (never an env or header value), what is added and what is not,
// and why.
func (p *ImportPlan) Print(w io.Writer) {
	fmt.Fprintf(w, "mcptrunk config: %s%s\n", p.cfgPath, map[bool]string{true: " (new)", false: ""}[p.cfg == nil])
	refused := 0
	for _, f := range p.files {
		fmt.Fprintf(w, "\n%s\n", describe(f.loc))
		switch {
		case f.missing:
			fmt.Fprintln(w, "  no such file")
		case f.err != nil:
			fmt.Fprintf(w, "  not read: %v\n", f.err)
		case len(f.servers) == 0:
			fmt.Fprintln(w, "  no servers")
		}
		for _, s := range f.servers {
			where := s.Command
			if s.Type != "stdio" {
				where = s.URL
			}
			if s.Disabled {
				where += " (disabled)"
			}
			switch s.outcome {
			case outAdd:
				fmt.Fprintf(w, "  + %-16s %-5s %s\n", s.Name, s.Type, where)
				for _, n := range s.Notes {
					fmt.Fprintf(w, "      note: %s\n", n)
				}
			case outSame:
				fmt.Fprintf(w, "  = %-16s %s\n", s.Name, s.why)
			case outClash:
				fmt.Fprintf(w, "  ~ %-16s not added: %s\n", s.Name, s.why)
			case outRefused:
				refused++
				fmt.Fprintf(w, "  - %-16s cannot be carried over: %s\n", s.Name, s.why)
			case outSelf:
				fmt.Fprintf(w, "  . %-16s runs mcptrunk itself; not imported\n", s.Name)
			}
		}
	}
	if len(p.files) == 0 {
		fmt.Fprintf(w, "\nNo host's file was found. Looked for:\n")
		for _, loc := range p.looked {
			fmt.Fprintf(w, "  %s\n", describe(loc))
		}
		fmt.Fprintf(w, "Name another file with --from HOST:FILE, or add a server with mcptrunk add NAME -- COMMAND [ARGS...].\n")
	}
	fmt.Fprintf(w, "\n%s to add", wording.Count(len(p.Add), "server", "servers"))
	if refused > 0 {
		fmt.Fprintf(w, ", %d that mcptrunk cannot express (-)", refused)
	}
	fmt.Fprintln(w, ".")
}

// WriteConfig adds the planned servers to mcptrunk's config as
// EditConfig writes it.
func (p *ImportPlan) WriteConfig(w io.Writer) error {
	out, err := MergeServers(p.cfg, p.Add)
	if err != nil {
		return fmt.Errorf("%s: %w", p.cfgPath, err)
	}
	if err := EditConfig(w, p.cfgPath, p.cfg, out); err != nil {
		return err
	}
	fmt.Fprintf(w, "Added %s to %s.\n", wording.Count(len(p.Add), "server", "servers"), p.cfgPath)
	return nil
}

// AddPlan is the plan of adding servers to the config at cfgPath whose
// bytes are cfg (nil: it does not exist yet), for WriteConfig.
func AddPlan(cfgPath string, cfg []byte, add []Server) *ImportPlan {
	return &ImportPlan{cfgPath: cfgPath, cfg: cfg, Add: add}
}

// NotTaken names the servers of the files read that mcptrunk does not take:
// those it cannot express, and those whose name a different entry holds.
// Installing mcptrunk in a host leaves these in the host's file.
func (p *ImportPlan) NotTaken() []string {
	var names []string
	for _, f := range p.files {
		for _, s := range f.servers {
			if s.outcome == outRefused || s.outcome == outClash {
				names = append(names, s.Name)
			}
		}
	}
	return names
}
