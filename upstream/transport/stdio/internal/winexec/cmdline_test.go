package winexec

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

const npx = `C:\Program Files\nodejs\npx.cmd`

func TestQuoteForCmd(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string // after the program: the arguments as written
	}{
		{"no arguments", nil, ``},
		{"plain", []string{"-y", "@modelcontextprotocol/server-everything", "C:\\data\\x.db", "a+b#c$d*e?f"}, ` -y @modelcontextprotocol/server-everything C:\data\x.db a+b#c$d*e?f`},
		{"empty", []string{""}, ` ""`},
		{"spaces and tabs", []string{"a b", "\tx"}, ` "a b" "` + "\t" + `x"`},
		{"equals, comma, semicolon split batch arguments", []string{"--port=9000", "a,b", "a;b"}, ` "--port=9000" "a,b" "a;b"`},
		{"cmd metacharacters", []string{"a&b", "a|b", "<in", ">out", "^", "(x)"}, ` "a&b" "a|b" "<in" ">out" "^" "(x)"`},
		{"an injection attempt", []string{`a" & calc & "`}, ` "a"" & calc & """`},
		{"a lone quote", []string{`"`}, ` """"`},
		{"JSON", []string{`{"k":"v w"}`}, ` "{""k"":""v w""}"`},
		{"trailing backslash", []string{`C:\dir\`}, ` "C:\dir\\"`},
		{"trailing backslashes", []string{`a\\`}, ` "a\\\\"`},
		{"backslashes before a quote", []string{`a\"b`, `a\\"b`}, ` "a\\""b" "a\\\\""b"`},
		{"backslashes not before a quote stay", []string{`\\server\share x`}, ` "\\server\share x"`},
		{"unicode", []string{"naïve", "日本語 テキスト"}, ` "naïve" "日本語 テキスト"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := QuoteForCmd(npx, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			want := `cmd.exe /d /v:off /s /c ""` + npx + `"` + tt.want + `"`
			if got != want {
				t.Errorf("QuoteForCmd =\n  %s\nwant\n  %s", got, want)
			}
			checkCmdLine(t, got, npx, tt.args)
		})
	}
}

func TestQuoteForCmdRefuses(t *testing.T) {
	tests := []struct {
		name    string
		program string
		args    []string
		index   int
		reason  string
	}{
		{"a variable", npx, []string{"ok", "%PATH%"}, 1, "%"},
		{"a lone percent", npx, []string{"100%"}, 0, "%"},
		{"a quoted variable", npx, []string{`"%SECRET%"`}, 0, "%"},
		{"a delayed variable", npx, []string{"!VAR!"}, 0, "!"},
		{"an exclamation", npx, []string{"a", "b", "hello!"}, 2, "!"},
		{"a newline", npx, []string{"a\nb"}, 0, "line break"},
		{"a carriage return", npx, []string{"a\r"}, 0, "line break"},
		{"NUL", npx, []string{"a\x00b"}, 0, "NUL"},
		{"a control character", npx, []string{"a\x1ab"}, 0, "control"},
		{"DEL", npx, []string{"\x7f"}, 0, "control"},
		{"invalid UTF-8", npx, []string{"\xff"}, 0, "UTF-8"},
		{"a program with %", `C:\Users\100%\npx.cmd`, nil, -1, "%"},
		{"a program with !", `C:\Users\bang!\npx.cmd`, nil, -1, "!"},
		{"a program with a quote", `C:\a"b\npx.cmd`, nil, -1, "not a file name"},
		{"a program ending in a backslash", `C:\npm\`, nil, -1, "not a file name"},
		{"no program", "", nil, -1, "not a file name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := QuoteForCmd(tt.program, tt.args)
			var ae *ArgError
			if !errors.As(err, &ae) {
				t.Fatalf("QuoteForCmd = %q, %v; want an *ArgError", got, err)
			}
			if ae.Index != tt.index || !strings.Contains(ae.Reason, tt.reason) {
				t.Errorf("refused index %d for %q, want index %d for %q", ae.Index, ae.Reason, tt.index, tt.reason)
			}
			msg := err.Error()
			for _, v := range append([]string{tt.program}, tt.args...) {
				if v != "" && len(v) > 1 && strings.Contains(msg, v) {
					t.Errorf("the error %q quotes the value %q", msg, v)
				}
			}
		})
	}
}

func TestArgErrorNamesTheIndex(t *testing.T) {
	_, err := QuoteForCmd(npx, []string{"a", "b", "%TOKEN%"})
	if err == nil || !strings.Contains(err.Error(), "args[2]") || strings.Contains(err.Error(), "TOKEN") {
		t.Errorf("error %v: want args[2] and no value", err)
	}
}

// checkCmdLine checks line as cmd.exe and then the batch file's program
// would read it: after /s strips the outer quotes, no character special to
// cmd.exe stands outside double quotes (so none is syntax, at cmd.exe's own
// parse or when the batch file's %* puts the same text in its own line),
// the first word is the program, and the C runtime's split of the rest
// gives back args.
func checkCmdLine(t *testing.T, line, program string, args []string) {
	t.Helper()
	const prefix = `cmd.exe /d /v:off /s /c "`
	rest, ok := strings.CutPrefix(line, prefix)
	if !ok || !strings.HasSuffix(rest, `"`) {
		t.Fatalf("%q does not have the form %s...\"", line, prefix)
	}
	inner := rest[:len(rest)-1] // /s: the first and last quote go
	if strings.ContainsAny(inner, "%!\r\n\x00") {
		t.Fatalf("%q holds a character cmd.exe expands or breaks on", inner)
	}
	quoted := false
	for i := 0; i < len(inner); i++ {
		c := inner[i]
		switch {
		case c == '"':
			quoted = !quoted
		case !quoted && strings.IndexByte("&|<>()^", c) >= 0:
			t.Fatalf("%q: %q at %d is outside quotes, so cmd.exe reads it as syntax", inner, c, i)
		}
	}
	if quoted {
		t.Fatalf("%q leaves a quote open", inner)
	}
	got := crtSplit(inner)
	want := append([]string{program}, args...)
	if !slices.Equal(got, want) {
		t.Fatalf("the program would read %q, want %q", got, want)
	}
}

// crtSplit splits a command line as the Microsoft C runtime does since
// Visual C++ 2008 (and as CommandLineToArgvW does for the arguments after
// the first): whitespace separates outside quotes; 2n backslashes before a
// quote are n and the quote is special, 2n+1 are n and a literal quote;
// other backslashes are literal; inside quotes "" is a literal quote.
func crtSplit(s string) []string {
	var (
		out    []string
		cur    strings.Builder
		inArg  bool
		quoted bool
	)
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case (c == ' ' || c == '\t') && !quoted:
			if inArg {
				out = append(out, cur.String())
				cur.Reset()
				inArg = false
			}
			i++
		case c == '\\':
			n := 0
			for i < len(s) && s[i] == '\\' {
				n++
				i++
			}
			inArg = true
			if i < len(s) && s[i] == '"' {
				cur.WriteString(strings.Repeat(`\`, n/2))
				if n%2 == 1 {
					cur.WriteByte('"')
					i++
				}
			} else {
				cur.WriteString(strings.Repeat(`\`, n))
			}
		case c == '"':
			inArg = true
			if quoted && i+1 < len(s) && s[i+1] == '"' {
				cur.WriteByte('"')
				i += 2
				continue
			}
			quoted = !quoted
			i++
		default:
			inArg = true
			cur.WriteByte(c)
			i++
		}
	}
	if inArg {
		out = append(out, cur.String())
	}
	return out
}

func TestCRTSplitModel(t *testing.T) {
	// The model itself, against the examples Microsoft documents for
	// parsing C command-line arguments.
	for in, want := range map[string][]string{
		`"a b c" d e`:     {"a b c", "d", "e"},
		`"ab\"c" "\\" d`:  {`ab"c`, `\`, "d"},
		`a\\\b d"e f"g h`: {`a\\\b`, "de fg", "h"},
		`a\\\"b c d`:      {`a\"b`, "c", "d"},
		`a\\\\"b c" d e`:  {`a\\b c`, "d", "e"},
		`a"b"" c d`:       {`ab" c d`},
	} {
		if got := crtSplit(in); !slices.Equal(got, want) {
			t.Errorf("crtSplit(%s) = %q, want %q", in, got, want)
		}
	}
}

// FuzzQuoteForCmd: whatever the arguments, QuoteForCmd either refuses them
// or writes a line in which cmd.exe sees no syntax and the program reads
// exactly the arguments given.
func FuzzQuoteForCmd(f *testing.F) {
	for _, s := range []string{"", "a b", `a" & calc & "`, `x\`, `\"`, `""`, "a&b|c", "^^", "%PATH%", "!x!", "é", `\\\"\\`} {
		f.Add(s, "second")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		args := []string{a, b}
		line, err := QuoteForCmd(npx, args)
		if err != nil {
			var ae *ArgError
			if !errors.As(err, &ae) || ae.Index < 0 || refused(args[ae.Index]) == "" {
				t.Fatalf("refused %q with %v", args, err)
			}
			return
		}
		checkCmdLine(t, line, npx, args)
	})
}
