package catalog

import (
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/pin"
)

func appRead(html string) []byte {
	return []byte(`{"contents":[{"uri":"ui://clock/app.html","mimeType":"text/html;profile=mcp-app","text":` + strings.ReplaceAll(`"`+html+`"`, "\n", `\n`) + `}]}`)
}

// TestCheckApp: an app read for the first time is recorded (warn mode, as
// serve records); the same HTML reads again; a changed HTML is logged and
// passes under warn, and is held back under enforce, as is an app never
// pinned; pinning off checks nothing.
func TestCheckApp(t *testing.T) {
	lockFile := filepath.Join(t.TempDir(), "mcptrunk.lock.json")
	logs := &strings.Builder{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	warn := NewPinner(config.TrunkOptions{Pin: config.PinWarn, LockFile: lockFile}, true, logger)
	const uri = "ui://clock/app.html"

	if err := warn.checkApp("basic", uri, appRead("<p>v1</p>")); err != nil {
		t.Fatalf("first read: %v", err)
	}
	lock, err := pin.Read(lockFile)
	if err != nil || lock.Servers["basic"][pin.Apps][uri].SHA256 == "" {
		t.Fatalf("the first read was not recorded: %+v, %v", lock, err)
	}
	if err := warn.checkApp("basic", uri, appRead("<p>v1</p>")); err != nil {
		t.Errorf("the pinned HTML again: %v", err)
	}
	if err := warn.checkApp("basic", uri, appRead("<p>v2</p>")); err != nil || !strings.Contains(logs.String(), "its HTML changed") {
		t.Errorf("a changed HTML under warn: %v, log:\n%s", err, logs)
	}
	if again, _ := pin.Read(lockFile); again.Servers["basic"][pin.Apps][uri].SHA256 != lock.Servers["basic"][pin.Apps][uri].SHA256 {
		t.Error("warn mode rewrote what was pinned")
	}

	enforce := NewPinner(config.TrunkOptions{Pin: config.PinEnforce, LockFile: lockFile}, false, logger)
	if err := enforce.checkApp("basic", uri, appRead("<p>v1</p>")); err != nil {
		t.Errorf("the pinned HTML under enforce: %v", err)
	}
	err = enforce.checkApp("basic", uri, appRead("<p>v2</p>"))
	if err == nil || !strings.Contains(err.Error(), `app ui://clock/app.html of server "basic" is not the one pinned`) || !strings.Contains(err.Error(), "mcptrunk pin basic") {
		t.Errorf("a changed HTML under enforce: %v", err)
	}
	if err := enforce.checkApp("other", uri, appRead("<p>v1</p>")); err == nil || !strings.Contains(err.Error(), "is not pinned") {
		t.Errorf("an app never pinned under enforce: %v", err)
	}
	off := NewPinner(config.TrunkOptions{Pin: config.PinOff, LockFile: lockFile}, true, logger)
	if err := off.checkApp("basic", uri, appRead("<p>v3</p>")); err != nil {
		t.Errorf("pinning off: %v", err)
	}
}

// TestAppEntry: the hash covers what the app reads as, not where from.
func TestAppEntry(t *testing.T) {
	a, _ := pin.AppEntry("ui://a", appRead("<p>x</p>"))
	b, _ := pin.AppEntry("ui://b", []byte(strings.Replace(string(appRead("<p>x</p>")), "ui://clock/app.html", "ui://elsewhere", 1)))
	c, _ := pin.AppEntry("ui://a", appRead("<p>y</p>"))
	if a.SHA256 != b.SHA256 || a.SHA256 == c.SHA256 {
		t.Errorf("hashes %s %s %s: want the same HTML alike and another HTML apart", a.SHA256, b.SHA256, c.SHA256)
	}
	if _, err := pin.AppEntry("ui://a", []byte(`[1]`)); err == nil {
		t.Error("a result that is not a read result was hashed")
	}
}
