package testkit

import (
	"fmt"
	"path/filepath"
	"sync"
)

// conformanceServerPkg is go-sdk's conformance everything-server (a Go SDK
// server with every feature, the stdio and HTTP upstream of the protocol
// and conformance tests), at the go-sdk version go.mod pins.
const conformanceServerPkg = "github.com/modelcontextprotocol/go-sdk/conformance/everything-server"

var conformance struct {
	once sync.Once
	path string
	err  error
}

// ConformanceServer builds go-sdk's conformance everything-server into dir
// the first time a test binary asks, and returns its path: later calls
// return the first build whatever their dir, so a package's tests build it
// once. dir outlives the tests that run it (a directory the test binary
// removes when it ends, not a t.TempDir).
func ConformanceServer(dir string) (string, error) {
	conformance.once.Do(func() {
		root, err := ModuleRoot()
		if err != nil {
			conformance.err = err
			return
		}
		path := filepath.Join(dir, "everything-server")
		if err := GoBuild(root, "-o", path, conformanceServerPkg); err != nil {
			conformance.err = fmt.Errorf("building go-sdk's conformance everything-server: %w", err)
			return
		}
		conformance.path = path
	})
	return conformance.path, conformance.err
}
