package oauth

import "github.com/mcptrunk/mcptrunk/internal/browser"

// BrowserOpener opens a URL in the user's browser; tests replace it.
var BrowserOpener = openBrowser

// openBrowser tries to open u (an http or https URL, checked by discovery).
// Errors are ignored: the URL is printed anyway.
func openBrowser(u string) { _ = browser.Open(u) }
