package proxy

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/proxy/catalog"
)

// responseOverhead is what the envelope of a response adds to its result:
// {"jsonrpc":"2.0","id":…,"result":…} and the newline, with room for an id
// of up to 90 bytes. The host's Conn measures the exact line; this estimate
// only decides which error the host gets.
const responseOverhead = 128

// bounded is the check of a routed result against trunk.maxMessageBytes
// (docs/host-limits.md) of st, the request's generation.
func (t *Trunk) bounded(st *state, method string, params json.RawMessage) sizeCheck {
	return sizeCheck{t, st, method, params}
}

// sizeCheck is bounded's check of one request's result: a value, so the
// check costs no allocation on every call.
type sizeCheck struct {
	t      *Trunk
	st     *state
	method string
	params json.RawMessage
}

// of passes res and err on unless res is over the host's message limit or
// err is the upstream's line over it. A host reads messages up to a limit,
// and one over it breaks the host's whole connection, losing every server:
// so an oversized result is refused with an error naming what sent it, the
// size and the setting. For a tool call it is a tool error, which the model
// reads; otherwise a JSON-RPC error. (The host's Conn enforces the limit on
// every message it writes, exactly; this check comes first so that the
// error can say which server and item.)
func (c sizeCheck) of(res json.RawMessage, err error) (json.RawMessage, error) {
	limit := c.st.cfg.Trunk.MaxMessageBytes
	size := int64(len(res) + responseOverhead)
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
	what, _ := rawjson.StringField(c.params, "name")
	if what == "" {
		what, _ = rawjson.StringField(c.params, "uri")
	}
	server := c.st.catalog().ServerOf(c.method, what)
	msg := fmt.Sprintf("the result of %s %q from server %q is %d bytes, more than %s (%d), the most the host is known to read in one message; raise it in the config if the host reads more",
		c.method, what, server, size, catalog.LimitSetting, limit)
	c.t.logger.Warn("refusing an oversized result", "server", server, "method", c.method, "item", what, "bytes", size, "limit", limit)
	if c.method == "tools/call" {
		return catalog.ToolError("%s", msg)
	}
	return nil, jsonrpc.Errorf(jsonrpc.CodeInternalError, "%s", msg)
}
