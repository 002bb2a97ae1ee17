package tasks

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/proxy/translate"
)

// A 2026-07-28 host's tasks/list and tasks/result are unknown methods and
// its task requests without the extension are -32021 naming it; with the
// extension, and for every 2025-era request, nothing is refused.
func TestStatelessGate(t *testing.T) {
	with := translate.HostRequest{Version: protocol.Stateless, Caps: map[string]json.RawMessage{"extensions": json.RawMessage(`{"` + Extension + `":{}}`)}}
	without := translate.HostRequest{Version: protocol.Stateless, Caps: map[string]json.RawMessage{"extensions": json.RawMessage(`{"io.modelcontextprotocol/ui":{}}`)}}
	host2025 := translate.HostRequest{Version: protocol.Revision2025}
	code := func(err error) int {
		var e *jsonrpc.Error
		if errors.As(err, &e) {
			return e.Code
		}
		return 0
	}
	for _, c := range []struct {
		method string
		host   translate.HostRequest
		want   int
	}{
		{"tasks/get", with, 0},
		{"tasks/update", with, 0},
		{"tasks/cancel", with, 0},
		{"tasks/list", with, jsonrpc.CodeMethodNotFound},
		{"tasks/result", with, jsonrpc.CodeMethodNotFound},
		{"tasks/result", without, jsonrpc.CodeMethodNotFound},
		{"tasks/get", without, protocol.CodeMissingClientCapabilities},
		{"tasks/update", without, protocol.CodeMissingClientCapabilities},
		{"tasks/cancel", translate.HostRequest{Version: protocol.Stateless}, protocol.CodeMissingClientCapabilities},
		{"tasks/list", host2025, 0},
		{"tasks/result", host2025, 0},
		{"tasks/get", host2025, 0},
	} {
		if got := code(StatelessGate(c.method, c.host)); got != c.want {
			t.Errorf("%s at %s (extensions %s): code %d, want %d", c.method, c.host.Version, c.host.Caps["extensions"], got, c.want)
		}
	}
	e := missingExtension("tasks/get")
	if !strings.Contains(string(e.Data), `"requiredCapabilities":{"extensions":{"`+Extension+`":{}}}`) {
		t.Errorf("-32021's data %s does not name the extension as a client declares it", e.Data)
	}
}
