package testkit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakePackage writes a package.json with the given bin member into
// modules/pkg, and the scripts it names.
func fakePackage(t *testing.T, modules, pkg, bin string, scripts ...string) {
	t.Helper()
	dir := filepath.Join(modules, filepath.FromSlash(pkg))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name":"`+pkg+`","bin":`+bin+`}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, s := range scripts {
		path := filepath.Join(dir, filepath.FromSlash(s))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestNPMBin(t *testing.T) {
	modules := t.TempDir()
	fakePackage(t, modules, "@scope/object-bin", `{"serve":"dist/index.js"}`, "dist/index.js")
	fakePackage(t, modules, "string-bin", `"bin/run.js"`, "bin/run.js")
	fakePackage(t, modules, "two-bins", `{"a":"a.js","b":"b.js"}`, "a.js", "b.js")
	fakePackage(t, modules, "missing-script", `"gone.js"`)
	fakePackage(t, modules, "no-bin", `null`)
	fakePackage(t, modules, "empty-bin", `{"x":""}`)

	for pkg, want := range map[string]string{
		"@scope/object-bin": filepath.Join(modules, "@scope", "object-bin", "dist", "index.js"),
		"string-bin":        filepath.Join(modules, "string-bin", "bin", "run.js"),
	} {
		got, err := NPMBin(modules, pkg)
		if err != nil || got != want {
			t.Errorf("NPMBin(%q) = %q, %v; want %q", pkg, got, err, want)
		}
	}
	for pkg, wantErr := range map[string]string{
		"two-bins":       "several bins",
		"missing-script": "entry point",
		"no-bin":         "no usable bin",
		"empty-bin":      "no usable bin",
		"not-installed":  "not installed",
	} {
		if got, err := NPMBin(modules, pkg); err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("NPMBin(%q) = %q, %v; want an error saying %q", pkg, got, err, wantErr)
		}
	}
}

func TestNPMModules(t *testing.T) {
	if got, want := NPMModules("/repo"), filepath.Join("/repo", "testdata", "npm", "node_modules"); got != want {
		t.Errorf("NPMModules = %q, want %q", got, want)
	}
}
