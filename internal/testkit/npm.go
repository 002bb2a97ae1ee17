package testkit

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// NPMModules returns where `make npm` installs, from the lockfile in
// testdata/npm, the npm MCP servers tests run as third-party upstreams:
// testdata/npm/node_modules under the module root. Tests of more than one
// package run them, so the path is spelled out here once.
func NPMModules(root string) string {
	return filepath.Join(root, "testdata", "npm", "node_modules")
}

// NPMBin returns the script an npm package installed in modules runs as its
// command ("@modelcontextprotocol/server-everything", say): the one entry of
// bin in its package.json, a string or an object with a single member. Read
// from package.json rather than assumed, it stays right when a new version
// of the package moves its entry point.
func NPMBin(modules, pkg string) (string, error) {
	dir := filepath.Join(modules, filepath.FromSlash(pkg))
	data, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return "", fmt.Errorf("%s is not installed: %w", pkg, err)
	}
	var meta struct {
		Bin json.RawMessage `json:"bin"`
	}
	if err := json.Unmarshal(data, &meta); err != nil {
		return "", fmt.Errorf("%s's package.json: %w", pkg, err)
	}
	var bin string
	if json.Unmarshal(meta.Bin, &bin) != nil {
		var bins map[string]string
		_ = json.Unmarshal(meta.Bin, &bins)
		if len(bins) > 1 {
			return "", fmt.Errorf("%s's package.json has several bins: %v", pkg, bins)
		}
		for _, b := range bins {
			bin = b
		}
	}
	if bin == "" {
		return "", fmt.Errorf("%s's package.json has no usable bin: %s", pkg, meta.Bin)
	}
	script := filepath.Join(dir, filepath.FromSlash(bin))
	if _, err := os.Stat(script); err != nil {
		return "", fmt.Errorf("%s's entry point: %w", pkg, err)
	}
	return script, nil
}
