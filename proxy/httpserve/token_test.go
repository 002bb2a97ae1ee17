package httpserve

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The signing key file must exist and hold 32 bytes or more; its errors
// name the file and never its content.
func TestLoadSigningKey(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	const short = "short-secret-value"
	for name, path := range map[string]string{
		"missing": filepath.Join(dir, "none"),
		"short":   write("short", short+"\n"),
		"blank":   write("blank", "   \n"),
	} {
		key, err := LoadSigningKey(path)
		if err == nil || key != nil {
			t.Errorf("%s: key %q, error %v; want an error", name, key, err)
			continue
		}
		if !strings.Contains(err.Error(), "signingKeyFile") || strings.Contains(err.Error(), short) {
			t.Errorf("%s: %v: want it to name the setting, and never the content", name, err)
		}
	}
	secret := strings.Repeat("k", MinSigningKey)
	key, err := LoadSigningKey(write("good", "  "+secret+"\n"))
	if err != nil || string(key) != secret {
		t.Errorf("a good key: %q, %v; want the content without the spaces around it", key, err)
	}
}
