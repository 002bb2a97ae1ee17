// Package hydra runs Ory Hydra, a real OAuth 2.1 / OpenID Connect
// authorization server, on loopback for the tests: built from its module
// (github.com/ory/hydra/v2, from the Go module proxy) once per machine,
// started with a database in the test's directory, with a login and consent app of the
// test's that signs in whichever user the authorization request names
// (login_hint) and grants the claims the test gives that user. Tests get
// access tokens from it through the authorization code flow with PKCE,
// as a host's OAuth client would.
package hydra

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// Module is the Hydra the tests run.
const Module = "github.com/ory/hydra/v2@v2.3.0"

var built struct {
	once sync.Once
	path string
	err  error
}

// Binary returns the path of Hydra's build, building it the first time on
// this machine (a few minutes: its sqlite driver is cgo) into the go
// build cache's directory, where later runs find it. Hydra's go.mod
// replaces two modules; a replace is honoured only in the main module, so
// it is built inside a copy of its own module, with the one replace that
// points into its repository (a client library it carries, published to
// the module proxy as well) dropped.
func Binary() (string, error) {
	built.once.Do(func() { built.path, built.err = build() })
	return built.path, built.err
}

func build() (string, error) {
	cache, err := goEnv("GOCACHE")
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "mcptrunk-testkit", strings.ReplaceAll(Module, "/", "_"))
	bin := filepath.Join(dir, "hydra")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	src, err := download()
	if err != nil {
		return "", err
	}
	work, err := os.MkdirTemp("", "hydra-src-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(work)
	if err := os.CopyFS(work, os.DirFS(src)); err != nil {
		return "", fmt.Errorf("copying %s: %w", Module, err)
	}
	gomod := filepath.Join(work, "go.mod")
	mod, err := os.ReadFile(gomod)
	if err != nil {
		return "", err
	}
	var kept []string
	for _, line := range strings.Split(string(mod), "\n") {
		if !strings.HasPrefix(line, "replace") || !strings.Contains(line, "=> ./") {
			kept = append(kept, line)
		}
	}
	if err := os.WriteFile(gomod, []byte(strings.Join(kept, "\n")), 0o644); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	// Built under a temporary name and renamed: a run stopped midway
	// leaves no half-written binary for the next to find.
	tmp := bin + ".tmp"
	if err := run(work, []string{"GOFLAGS=-mod=mod"}, "go", "build", "-tags", "sqlite,sqlite_omit_load_extension", "-o", tmp, "."); err != nil {
		return "", fmt.Errorf("building %s: %w", Module, err)
	}
	return bin, os.Rename(tmp, bin)
}

// download fetches Hydra's module into the module cache and returns its
// directory there.
func download() (string, error) {
	var out bytes.Buffer
	cmd := exec.Command("go", "mod", "download", "-json", Module)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go mod download %s: %v\n%s", Module, err, out.String())
	}
	var m struct{ Dir, Error string }
	if err := json.Unmarshal(out.Bytes(), &m); err != nil || m.Dir == "" {
		return "", fmt.Errorf("go mod download %s: %s %s", Module, m.Error, out.String())
	}
	return m.Dir, nil
}

func goEnv(name string) (string, error) {
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		return "", fmt.Errorf("go env %s: %w", name, err)
	}
	return strings.TrimSpace(string(out)), nil
}

func run(dir string, env []string, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%v\n%s", err, out.String())
	}
	return nil
}
