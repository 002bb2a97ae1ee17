package translate

import (
	"encoding/json"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
)

// versions2025 are the 2025-era revisions the trunk answers initialize
// with, newest first. A host asking for another gets the newest, as the
// spec prescribes.
var versions2025 = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// Initialize is what a 2025-era host's initialize says of it.
type Initialize struct {
	HostRequest               // the revision agreed and the host's capabilities
	ClientName, ClientVersion string
}

// ReadInitialize reads initialize's params and agrees on the revision.
func ReadInitialize(params json.RawMessage) (Initialize, error) {
	var p struct {
		ProtocolVersion string                     `json:"protocolVersion"`
		Capabilities    map[string]json.RawMessage `json:"capabilities"`
		ClientInfo      struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"clientInfo"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return Initialize{}, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "initialize: %v", err)
	}
	version := versions2025[0]
	for _, v := range versions2025 {
		if v == p.ProtocolVersion {
			version = v
		}
	}
	return Initialize{HostRequest{Version: version, Caps: p.Capabilities}, p.ClientInfo.Name, p.ClientInfo.Version}, nil
}
