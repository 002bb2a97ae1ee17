package oauth

import (
	"path/filepath"
	"testing"
)

func TestPlatformTokenDir(t *testing.T) {
	appData, local := filepath.FromSlash("/u/AppData/Roaming"), filepath.FromSlash("/u/AppData/Local")
	newDir, oldDir := filepath.Join(appData, "mcptrunk", "oauth"), filepath.Join(local, "mcptrunk", "oauth")
	winEnv := map[string]string{"AppData": appData, "LocalAppData": local}
	tests := []struct {
		name string
		goos string
		env  map[string]string
		dirs []string // the directories that exist
		want string
	}{
		{"linux decides by home", "linux", winEnv, nil, ""},
		{"XDG_STATE_HOME first, everywhere", "windows", map[string]string{"XDG_STATE_HOME": filepath.FromSlash("/state"), "AppData": appData}, nil, filepath.Join(filepath.FromSlash("/state"), "mcptrunk", "oauth")},
		{"windows: AppData", "windows", winEnv, nil, newDir},
		{"windows: AppData when both exist", "windows", winEnv, []string{newDir, oldDir}, newDir},
		{"windows: earlier tokens stay in LocalAppData", "windows", winEnv, []string{oldDir}, oldDir},
		{"windows: no AppData", "windows", map[string]string{"LocalAppData": local}, nil, oldDir},
		{"windows: neither", "windows", nil, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isDir := func(p string) bool {
				for _, d := range tt.dirs {
					if d == p {
						return true
					}
				}
				return false
			}
			if got := platformTokenDir(tt.goos, func(k string) string { return tt.env[k] }, isDir); got != tt.want {
				t.Errorf("platformTokenDir = %q, want %q", got, tt.want)
			}
		})
	}
}
