package stdio

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
)

// TestStartNamesMissingCommand: a command that is not there is named as
// missing, with what to do, and never as the system call that failed.
func TestStartNamesMissingCommand(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		path string
		want []string
	}{
		{"mcptrunk-no-such-command", []string{`command "mcptrunk-no-such-command" not found: it is in no directory of PATH (PATH=`, "give its full path"}},
		{filepath.Join(dir, "no-such-server"), []string{"not found: there is no such file"}},
	}
	if runtime.GOOS != "windows" { // Windows runs no #! line
		script := filepath.Join(dir, "script")
		if err := os.WriteFile(script, []byte("#!/no/such/interpreter\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, struct {
			path string
			want []string
		}{script, []string{"the interpreter its first line (#!) names is not installed"}})
	}
	for _, c := range cases {
		tr, err := Start(Command{Path: c.path}, nil, slog.New(slog.DiscardHandler), jsonrpc.Options{})
		if err == nil {
			tr.Close(t.Context())
			t.Errorf("%s: started", c.path)
			continue
		}
		for _, want := range c.want {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %q lacks %q", c.path, err, want)
			}
		}
		if strings.Contains(err.Error(), "fork/exec") || strings.Contains(err.Error(), "no such file or directory") {
			t.Errorf("%s: %q names the system call", c.path, err)
		}
		if !errors.Is(err, fs.ErrNotExist) && !strings.Contains(c.path, "no-such-command") {
			t.Errorf("%s: %v does not unwrap to the system's error", c.path, err)
		}
	}
}
