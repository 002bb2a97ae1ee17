package translate

import (
	"encoding/json"
	"testing"
)

// What servers are told of the host: sampling, elicitation, roots and the
// extensions it declared, each as the host sent it; nothing else.
func TestForwardedCaps(t *testing.T) {
	hr := HostRequest{Version: "2025-11-25", Caps: map[string]json.RawMessage{
		"experimental": json.RawMessage(`{"x":{}}`),
		"extensions":   json.RawMessage(`{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}`),
		"roots":        json.RawMessage(` {"listChanged":true}`),
		"sampling":     json.RawMessage(`{}`),
	}}
	want := `{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}},"roots":{"listChanged":true},"sampling":{}}`
	if got := string(hr.ForwardedCaps()); got != want {
		t.Errorf("ForwardedCaps = %s\nwant %s", got, want)
	}
	if ext := hr.extensions(); len(ext) != 1 || ext["io.modelcontextprotocol/ui"] == nil {
		t.Errorf("Extensions = %v", ext)
	}
	if got := string((HostRequest{}).ForwardedCaps()); got != `{}` {
		t.Errorf("no capabilities: %s", got)
	}
}
