//go:build !windows

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestPinCheckAfterServeHTTP: what serve --http records on first sight is
// what hosts that can sample and elicit are offered (server-everything
// offers them tools it offers no other host), and pin --check, run right
// after with nothing changed, finds it all pinned.
func TestPinCheckAfterServeHTTP(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 3*time.Minute)
	dir := t.TempDir()
	everything := server{"command": npmNode(t), "args": []string{npmScript(t, everythingPkg), "stdio"}, "timeouts": slowTimeouts}
	data := `{"mcpServers": {"everything": ` + mustJSON(everything) + `}, "trunk": {"pin": "warn"}}`
	cfg := filepath.Join(dir, "mcptrunk.json")
	if err := os.WriteFile(cfg, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(dir, "mcptrunk.lock.json")

	r := startDeployReplica(t, ctx, "mcptrunk", cfg)
	if err := eventually(ctx, 20*time.Millisecond, func() error {
		if b, _ := os.ReadFile(lock); !strings.Contains(string(b), `"trigger-sampling-request"`) {
			return context.DeadlineExceeded
		}
		return nil
	}); err != nil {
		t.Fatalf("serve --http recorded no tool for hosts that can sample: %v\n%s", err, tail(r.stderr.String(), 3000))
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	<-r.exited

	runPin(t, 0, []string{`server "everything": matches the lockfile`}, "--check", "--config", cfg)
}
