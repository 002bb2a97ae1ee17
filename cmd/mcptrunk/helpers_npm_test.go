package main

// The npm reference servers (installed by `make npm` into npmModules), run
// as third-party upstreams by the interop, policy, protocol and differential
// tests. A test that needs them fails, not skips, when they are missing.

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/testkit"
)

// The npm packages the tests run.
const (
	everythingPkg = "@modelcontextprotocol/server-everything"
	filesystemPkg = "@modelcontextprotocol/server-filesystem"
)

// slowTimeouts suit node servers on a busy two-core machine.
var slowTimeouts = map[string]any{"connect": "60s", "list": "60s", "call": "60s"}

// npmNode returns the node binary the npm servers run on.
func npmNode(t testing.TB) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is needed to run the npm reference servers: %v", err)
	}
	return node
}

// npmScript returns the entry point of the installed npm package pkg.
func npmScript(t testing.TB, pkg string) string {
	t.Helper()
	if _, err := os.Stat(npmModules); err != nil {
		t.Fatalf("the npm reference servers are not installed (%s: %v): run `make npm` in %s first", npmModules, err, moduleRoot)
	}
	script, err := testkit.NPMBin(npmModules, pkg)
	if err != nil {
		t.Fatalf("%v: run `make npm` in %s", err, moduleRoot)
	}
	return script
}

// npmServers returns node and the entry points of server-everything and
// server-filesystem.
func npmServers(t testing.TB) (node, everything, filesystem string) {
	t.Helper()
	return npmNode(t), npmScript(t, everythingPkg), npmScript(t, filesystemPkg)
}

// everythingArgv returns the command line of server-everything over stdio.
func everythingArgv(t testing.TB) []string {
	t.Helper()
	return []string{npmNode(t), npmScript(t, everythingPkg), "stdio"}
}

// everythingServer is server-everything as a config entry, with extra fields.
func everythingServer(t testing.TB, extra map[string]any) server {
	node, everything, _ := npmServers(t)
	s := server{"command": node, "args": []string{everything, "stdio"}, "timeouts": slowTimeouts}
	for k, v := range extra {
		s[k] = v
	}
	return s
}

// filesystemServer is server-filesystem serving dir.
func filesystemServer(t testing.TB, dir string) server {
	node, _, filesystem := npmServers(t)
	return server{"command": node, "args": []string{filesystem, dir}, "timeouts": slowTimeouts}
}

// startRawEverything connects to server-everything directly.
func startRawEverything(t testing.TB, ctx context.Context) *rawConn {
	t.Helper()
	node, everything, _ := npmServers(t)
	return startRawDirect(t, ctx, "everything", node, everything, "stdio")
}
