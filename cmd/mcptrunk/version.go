package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
)

// buildVersion is the release version, stamped by `make dist` with
// -ldflags "-X main.buildVersion=v1.2.3". A release archive is built from a
// checkout, where the module version is "(devel)", so without the stamp it
// could not say which release it is.
var buildVersion string

// version is the version mcptrunk reports to hosts, servers and the log: the
// stamped release, else the module version (go install ...@v1.2.3), else
// "dev".
func version() string {
	if buildVersion != "" {
		return buildVersion
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "dev"
}

// buildDetails is what a bug report needs beyond the version: the commit,
// its time, whether the tree had uncommitted changes, and the toolchain.
type buildDetails struct {
	revision, time string
	modified       bool
	goVersion      string
}

// readBuildDetails reads the VCS stamps the go command records when it
// builds inside a checkout. A build outside one (go install ...@version,
// or -buildvcs=false) has none; the module version then identifies it.
func readBuildDetails() buildDetails {
	d := buildDetails{goVersion: runtime.Version()}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return d
	}
	d.goVersion = info.GoVersion
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			d.revision = s.Value
		case "vcs.time":
			d.time = s.Value
		case "vcs.modified":
			d.modified = s.Value == "true"
		}
	}
	return d
}

// versionCommand prints the version and the build details, one per line
// (the first is "mcptrunk VERSION", for scripts).
type versionCommand struct{}

func (versionCommand) run(_ context.Context, env *environment) error {
	_, err := fmt.Fprint(env.stdout, formatVersion(version(), readBuildDetails()))
	return err
}

func formatVersion(v string, d buildDetails) string {
	s := fmt.Sprintf("mcptrunk %s\n", v)
	if d.revision != "" {
		s += "commit   " + d.revision
		if d.modified {
			s += " (modified)"
		}
		s += "\n"
	}
	if d.time != "" {
		s += "date     " + d.time + "\n"
	}
	return s + fmt.Sprintf("go       %s %s/%s\n", d.goVersion, runtime.GOOS, runtime.GOARCH)
}
