package tasks

import (
	"encoding/json"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/proxy/translate"
)

// StatelessGate is what a 2026-07-28 host's tasks request gets before any
// server is asked, as a server of the extension would answer it itself
// (SEP-2663): tasks/list and tasks/result, which the extension removed
// (tasks/get inlines the result), are unknown methods; tasks/get,
// tasks/update and tasks/cancel from a request that does not declare the
// extension are -32021 naming it. nil for a request to route, and for every
// 2025-era request (the core tasks of 2025-11-25 keep all five methods).
func StatelessGate(method string, host translate.HostRequest) error {
	if !host.Stateless() {
		return nil
	}
	switch method {
	case "tasks/list", "tasks/result":
		return jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "method %q does not exist at %s: the tasks extension removed it (tasks/get inlines a finished task's result)", method, protocol.Stateless)
	}
	if rawjson.HasField(host.Caps["extensions"], Extension) {
		return nil
	}
	return missingExtension(method)
}

// missingExtension is -32021 (Missing Required Client Capability) for a
// request that needs the tasks extension declared, its data naming it as
// the client would declare it.
func missingExtension(what string) *jsonrpc.Error {
	e := jsonrpc.Errorf(protocol.CodeMissingClientCapabilities, "%s needs the client capability %s (declare it in the request's _meta clientCapabilities.extensions)", what, Extension)
	e.Data = json.RawMessage(`{"requiredCapabilities":{"extensions":{"` + Extension + `":{}}}}`)
	return e
}
