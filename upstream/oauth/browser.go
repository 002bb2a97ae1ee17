package oauth

import (
	"os/exec"
	"runtime"
)

// BrowserOpener opens a URL in the user's browser; tests replace it.
var BrowserOpener = openBrowser

// openBrowser tries to open u (an http or https URL, checked by discovery)
// with the platform's opener. Errors are ignored: the URL is printed
// anyway. The opener's output goes nowhere (stdout may be the protocol).
func openBrowser(u string) {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", u)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", u)
	default:
		cmd = exec.Command("xdg-open", u)
	}
	if cmd.Start() != nil {
		return
	}
	go func() { _ = cmd.Wait() }()
}
