package testkit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestModuleRoot(t *testing.T) {
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil || !strings.HasPrefix(string(data), "module github.com/mcptrunk/mcptrunk\n") {
		t.Fatalf("ModuleRoot = %q: its go.mod is not this module's (%v)", root, err)
	}
}

func TestGoBuildReportsOutput(t *testing.T) {
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	err = GoBuild(root, "-o", t.TempDir(), "./internal/testkit/no-such-package")
	if err == nil || !strings.Contains(err.Error(), "go build -o") || !strings.Contains(err.Error(), "no-such-package") {
		t.Errorf("GoBuild of a missing package: %v; want the command and go's output", err)
	}
}
