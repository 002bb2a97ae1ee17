package catalog

// The host's message limit (trunk.maxMessageBytes, docs/host-limits.md).

import (
	"encoding/json"
	"fmt"
)

// LimitSetting names the setting in messages.
const LimitSetting = "trunk.maxMessageBytes"

// pageOverhead is what a list page adds to its items: the envelope, the
// list's field and a nextCursor (an exported name, base64-encoded).
const pageOverhead = 1024

// ToolError is a tools/call result that reports an error to the model
// (isError), rather than a JSON-RPC error, which the host handles.
func ToolError(format string, args ...any) (json.RawMessage, error) {
	text, _ := json.Marshal(fmt.Sprintf(format, args...))
	return json.RawMessage(`{"content":[{"type":"text","text":` + string(text) + `}],"isError":true}`), nil
}
