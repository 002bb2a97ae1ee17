package winexec

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// files is a fake file system: the paths that exist, compared without
// regard to case as NTFS does. It records what Resolve asked about.
type files struct {
	present []string
	asked   []string
}

func (f *files) exists(p string) bool {
	f.asked = append(f.asked, p)
	for _, q := range f.present {
		if strings.EqualFold(p, q) {
			return true
		}
	}
	return false
}

func TestResolve(t *testing.T) {
	nodeDir := `C:\Program Files\nodejs`
	npmDir := `C:\Users\ann\AppData\Roaming\npm`
	path := []string{nodeDir, npmDir, `C:\Windows\system32`}
	std := []string{".COM", ".EXE", ".BAT", ".CMD"}
	tests := []struct {
		name    string
		command string
		path    []string
		pathext []string
		present []string
		want    string // "" means ErrNotFound
	}{
		{"npx is a cmd shim", "npx", path, std,
			[]string{nodeDir + `\npx`, nodeDir + `\npx.cmd`, nodeDir + `\node.exe`}, nodeDir + `\npx.cmd`},
		{"the extensionless npx (a shell script for Git Bash) is never picked", "npx", path, std,
			[]string{nodeDir + `\npx`}, ""},
		{"PATHEXT order decides within a directory", "tool", path, std,
			[]string{npmDir + `\tool.cmd`, npmDir + `\tool.exe`}, npmDir + `\tool.exe`},
		{"directory order beats PATHEXT order", "tool", path, std,
			[]string{nodeDir + `\tool.cmd`, npmDir + `\tool.exe`}, nodeDir + `\tool.cmd`},
		{"case-insensitive command and extension", "NODE", path, []string{".exe"},
			[]string{nodeDir + `\node.EXE`}, nodeDir + `\NODE.exe`},
		{"a name with a PATHEXT extension is tried as given first", "node.exe", path, std,
			[]string{nodeDir + `\node.exe`, nodeDir + `\node.exe.cmd`}, nodeDir + `\node.exe`},
		{"a name with a PATHEXT extension still gets the extensions", "tool.exe", path, std,
			[]string{npmDir + `\tool.exe.cmd`}, npmDir + `\tool.exe.cmd`},
		{"an extension outside PATHEXT is not run as given", "server.js", path, std,
			[]string{nodeDir + `\server.js`}, ""},
		{"lower-case PATHEXT without dots", "uvx", path, []string{"exe", " cmd "},
			[]string{npmDir + `\uvx.cmd`}, npmDir + `\uvx.cmd`},
		{"empty PATHEXT means the default", "uvx", path, nil,
			[]string{npmDir + `\uvx.bat`}, npmDir + `\uvx.bat`},
		{"PATHEXT of empty entries means the default", "uvx", path, []string{"", " "},
			[]string{npmDir + `\uvx.com`}, npmDir + `\uvx.com`},
		{"PATHEXT without .CMD cannot find a cmd", "npx", path, []string{".EXE"},
			[]string{nodeDir + `\npx.cmd`}, ""},
		{"relative and empty PATH entries are skipped", "srv", []string{"", ".", `bin`, `\rooted`, `C:drive-relative`, npmDir}, std,
			[]string{`srv.exe`, `.\srv.exe`, `bin\srv.exe`, `\rooted\srv.exe`, `C:drive-relative\srv.exe`, npmDir + `\srv.exe`}, npmDir + `\srv.exe`},
		{"a UNC directory is absolute", "srv", []string{`\\host\share\bin`}, std,
			[]string{`\\host\share\bin\srv.exe`}, `\\host\share\bin\srv.exe`},
		{"a directory ending in a separator", "srv", []string{`D:\`}, std,
			[]string{`D:\srv.exe`}, `D:\srv.exe`},
		{"forward slashes in a directory", "srv", []string{`D:/tools`}, std,
			[]string{`D:/tools\srv.exe`}, `D:/tools\srv.exe`},
		{"an absolute path with an extension is taken as given", `C:\tools\srv.exe`, path, std,
			[]string{`C:\tools\srv.exe`}, `C:\tools\srv.exe`},
		{"an absolute path with any extension is taken as given", `C:\tools\srv.bin`, path, std,
			[]string{`C:\tools\srv.bin`}, `C:\tools\srv.bin`},
		{"an absolute path with an extension that is missing is not found", `C:\tools\srv.exe`, path, std,
			[]string{`C:\tools\srv.exe.cmd`, nodeDir + `\srv.exe`}, ""},
		{"an absolute path without extension gets PATHEXT", `C:\tools\srv`, path, std,
			[]string{`C:\tools\srv`, `C:\tools\srv.cmd`}, `C:\tools\srv.cmd`},
		{"a relative path is taken as given, not searched", `bin\srv`, path, std,
			[]string{`bin\srv.exe`, nodeDir + `\bin\srv.exe`}, `bin\srv.exe`},
		{"a forward-slash relative path", `./srv`, path, std,
			[]string{`./srv.bat`}, `./srv.bat`},
		{"a drive-relative path", `C:srv`, path, std,
			[]string{`C:srv.exe`}, `C:srv.exe`},
		{"a dot in a directory is not an extension", `C:\my.tools\srv`, path, std,
			[]string{`C:\my.tools\srv.exe`}, `C:\my.tools\srv.exe`},
		{"nothing anywhere", "nothing", path, std, nil, ""},
		{"no PATH at all", "npx", nil, std, []string{`npx.cmd`}, ""},
		{"unicode names", "服务", []string{`C:\ツール`}, std,
			[]string{`C:\ツール\服务.exe`}, `C:\ツール\服务.exe`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := &files{present: tt.present}
			got, err := Resolve(tt.command, tt.path, tt.pathext, fs.exists)
			if tt.want == "" {
				if !errors.Is(err, ErrNotFound) {
					t.Fatalf("Resolve = %q, %v; want ErrNotFound", got, err)
				}
				return
			}
			if err != nil || !strings.EqualFold(got, tt.want) {
				t.Fatalf("Resolve = %q, %v; want %q (asked %q)", got, err, tt.want, fs.asked)
			}
		})
	}
}

// TestResolveNeverAsksTheCurrentDirectory pins the one rule that differs
// from cmd.exe on purpose: a bare name is never looked for in the working
// directory, which a server's config does not control.
func TestResolveNeverAsksTheCurrentDirectory(t *testing.T) {
	fs := &files{}
	_, _ = Resolve("npx", []string{`C:\a`, `C:\b`}, nil, fs.exists)
	want := []string{
		`C:\a\npx.COM`, `C:\a\npx.EXE`, `C:\a\npx.BAT`, `C:\a\npx.CMD`,
		`C:\b\npx.COM`, `C:\b\npx.EXE`, `C:\b\npx.BAT`, `C:\b\npx.CMD`,
	}
	if !slices.Equal(fs.asked, want) {
		t.Errorf("asked %q\nwant  %q", fs.asked, want)
	}
}

func TestResolveEmptyCommand(t *testing.T) {
	if _, err := Resolve("", []string{`C:\a`}, nil, func(string) bool { return true }); err == nil {
		t.Error("an empty command resolved")
	}
}

func TestIsBatch(t *testing.T) {
	for file, want := range map[string]bool{
		`C:\npm\npx.cmd`: true, `C:\npm\npx.CMD`: true, `x.Bat`: true, `C:\node\node.exe`: false,
		`C:\x.cmd\srv.exe`: false, `C:\dir.cmd\srv`: false, `cmd`: false, `C:\a\.cmd`: true, `x.cmdx`: false,
	} {
		if got := IsBatch(file); got != want {
			t.Errorf("IsBatch(%q) = %v, want %v", file, got, want)
		}
	}
}

func TestSplitList(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{`C:\a;C:\b`, []string{`C:\a`, `C:\b`}},
		{`C:\a;;C:\b;`, []string{`C:\a`, `C:\b`}},
		{`"C:\Program Files\nodejs";C:\b`, []string{`C:\Program Files\nodejs`, `C:\b`}},
		{`"C:\semi;colon";C:\b`, []string{`C:\semi;colon`, `C:\b`}},
		{`C:\pa"rt;ly"\x`, []string{`C:\part;ly\x`}},
		{`""`, nil},
	}
	for _, tt := range tests {
		if got := SplitList(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("SplitList(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSplitPathExt(t *testing.T) {
	got := SplitPathExt(".COM;.EXE;;.BAT; .CMD ;.VBS;.JS;")
	want := []string{".COM", ".EXE", ".BAT", ".CMD", ".VBS", ".JS"}
	if !slices.Equal(got, want) {
		t.Errorf("SplitPathExt = %q, want %q", got, want)
	}
}

func TestGetenv(t *testing.T) {
	env := []string{"=C:=C:\\dir", "Path=C:\\a", "PATHEXT=.EXE", "OTHER=x", "PATH=C:\\b", "broken"}
	if got := Getenv(env, "PATH"); got != `C:\b` {
		t.Errorf("Getenv(PATH) = %q, want the later entry C:\\b", got)
	}
	if got := Getenv(env, "pathext"); got != ".EXE" {
		t.Errorf("Getenv(pathext) = %q", got)
	}
	if got := Getenv(env, "C:"); got != "" {
		t.Errorf("Getenv(C:) = %q, want nothing (a drive's directory is no variable)", got)
	}
	if got := Getenv(env, "missing"); got != "" {
		t.Errorf("Getenv(missing) = %q", got)
	}
}
