package testkit

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ModuleRoot returns the directory holding the module's go.mod: what the go
// command says, or else the nearest go.mod above the working directory.
// Tests that build the module's commands or read its testdata need it
// wherever their package sits.
func ModuleRoot() (string, error) {
	if out, err := exec.Command("go", "env", "GOMOD").Output(); err == nil {
		if gomod := strings.TrimSpace(string(out)); gomod != "" && gomod != os.DevNull {
			return filepath.Dir(gomod), nil
		}
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("cannot find the module root: no go.mod above the working directory")
		}
		dir = parent
	}
}

// GoBuild runs `go build args...` in root, the module root, so that the
// module's go.mod pins every dependency of what is built (the go-sdk of a
// server built from source, say). A failure returns the command's output,
// which is what says why. Tests build the programs they run as processes
// with it, once per run.
func GoBuild(root string, args ...string) error {
	cmd := exec.Command("go", append([]string{"build"}, args...)...)
	cmd.Dir = root
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return nil
}

// KeepGoCache sets GOCACHE in this process's environment to the go build
// cache the go command uses now, unless GOCACHE is set already. Call it
// before pointing XDG_CACHE_HOME elsewhere (as tests do, to keep the
// trunk's catalog cache out of the user's): on Linux the build cache lives
// under XDG_CACHE_HOME by default, and every go build the tests run would
// otherwise start from an empty cache and compile every package again.
func KeepGoCache() {
	if os.Getenv("GOCACHE") != "" {
		return
	}
	if out, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil {
		if cache := strings.TrimSpace(string(out)); cache != "" {
			os.Setenv("GOCACHE", cache)
		}
	}
}
