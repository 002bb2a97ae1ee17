package catalog

// The host's message limit (trunk.maxMessageBytes, docs/host-limits.md).

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
)

// LimitSetting names the setting in messages.
const LimitSetting = "trunk.maxMessageBytes"

// ResponseOverhead is what the envelope of a response adds to its result:
// {"jsonrpc":"2.0","id":…,"result":…} and the newline, with room for an id
// of up to 90 bytes. The host's Conn measures the exact line; estimates
// here only decide which error the host gets.
const ResponseOverhead = 128

// pageOverhead is what a list page adds to its items: the envelope, the
// list's field and a nextCursor (an exported name, base64-encoded).
const pageOverhead = 1024

// Bound checks the result of a routed request against the host's message
// limit. A host reads messages up to a limit, and one over it breaks the
// host's whole connection, losing every server: so an oversized result is
// refused with an error naming what sent it, the size and the setting. For
// a tool call it is a tool error, which the model reads; otherwise a
// JSON-RPC error. (The host's Conn enforces the limit on every message it
// writes, exactly; this check comes first so that the error can say which
// server and item.) cat is called only for an oversized result, to name
// its server.
func Bound(limit int, method string, params, res json.RawMessage, err error, cat func() *Catalog, logger *slog.Logger) (json.RawMessage, error) {
	size := int64(len(res) + ResponseOverhead)
	if err != nil {
		// Only an error costs the errors.As (its target escapes).
		var over *jsonrpc.OverlongLineError
		if !errors.As(err, &over) || errors.Is(err, jsonrpc.ErrClosed) {
			return res, err
		}
		size, limit = over.Size, over.Limit // refused while reading it
	} else if limit <= 0 || size <= int64(limit) {
		return res, err
	}
	what, _ := rawjson.StringField(params, "name")
	if what == "" {
		what, _ = rawjson.StringField(params, "uri")
	}
	server := cat().ServerOf(method, what)
	msg := fmt.Sprintf("the result of %s %q from server %q is %d bytes, more than %s (%d), the most the host is known to read in one message; raise it in the config if the host reads more",
		method, what, server, size, LimitSetting, limit)
	logger.Warn("refusing an oversized result", "server", server, "method", method, "item", what, "bytes", size, "limit", limit)
	if method == "tools/call" {
		return ToolError("%s", msg)
	}
	return nil, jsonrpc.Errorf(jsonrpc.CodeInternalError, "%s", msg)
}

// ToolError is a tools/call result that reports an error to the model
// (isError), rather than a JSON-RPC error, which the host handles.
func ToolError(format string, args ...any) (json.RawMessage, error) {
	text, _ := json.Marshal(fmt.Sprintf(format, args...))
	return json.RawMessage(`{"content":[{"type":"text","text":` + string(text) + `}],"isError":true}`), nil
}
