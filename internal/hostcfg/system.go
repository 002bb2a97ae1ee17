package hostcfg

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// SystemEnv is this system as the hosts see it: its OS, the user's home,
// the process's environment, and project (made absolute; "" for the
// current directory), the project whose servers count.
func SystemEnv(project string) (Env, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return Env{}, fmt.Errorf("no home directory, where the hosts keep their settings: %w", err)
	}
	if project == "" {
		if project, err = os.Getwd(); err != nil {
			return Env{}, err
		}
	}
	if project, err = filepath.Abs(project); err != nil {
		return Env{}, err
	}
	return Env{GOOS: runtime.GOOS, Home: home, Getenv: os.Getenv, Project: project}, nil
}

// LocationsFor lists the files from names: every host's (""), one host's
// (its id), or one file, in the format its name says or a HOST: prefix
// does (claude-desktop:/tmp/servers.json). A file whose host cannot be
// told is an error that says how to name it.
func LocationsFor(from string, sys Env) ([]Location, error) {
	if from == "" {
		var out []Location
		for _, h := range Hosts {
			out = append(out, Locations(h, sys)...)
		}
		return out, nil
	}
	h, err := HostByID(from)
	var ambiguous *AmbiguousHostError
	switch {
	case err == nil:
		return Locations(h, sys), nil
	case errors.As(err, &ambiguous):
		return nil, err
	}
	var host *Host
	path := from
	if id, rest, ok := strings.Cut(from, ":"); ok {
		if h, err := HostByID(id); err == nil {
			host, path = h, rest
		}
	}
	if host == nil {
		if host = GuessHost(path); host == nil {
			return nil, fmt.Errorf("neither a host (%s) nor a file whose name says which host's it is; write HOST:%s",
				strings.Join(HostIDs(), ", "), from)
		}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	return []Location{fileLocation(host, abs)}, nil
}

// fileLocation is a file named on the command line: a project's when it
// lies in one (.mcp.json, .vscode/, .cursor/, .zed/), so that
// ${workspaceFolder} has a value.
func fileLocation(host *Host, path string) Location {
	loc := Location{Host: host, Path: path, Scope: ScopeUser}
	dir := filepath.Dir(path)
	switch {
	case filepath.Base(path) == ".mcp.json":
		loc.Scope, loc.Project = ScopeProject, dir
	case filepath.Base(dir) == ".vscode" || filepath.Base(dir) == ".cursor" || filepath.Base(dir) == ".zed":
		loc.Scope, loc.Project = ScopeProject, filepath.Dir(dir)
	}
	return loc
}

// ScopeLocation is the file of host's servers in scope.
func ScopeLocation(host *Host, scope Scope, sys Env) (Location, error) {
	for _, loc := range Locations(host, sys) {
		if loc.Scope == scope {
			return loc, nil
		}
	}
	return Location{}, fmt.Errorf("%s has no %s-scope file", host.Name, scope)
}
