package translate

import (
	"bytes"
	"encoding/json"

	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/proxy/extensions"
)

// HostRequest is what the trunk knows about the host while it handles one of
// the host's requests: the revision the request is at and the capabilities
// the host declared for it. At the stateless revision both come with each
// request (its _meta); before it, from the host's initialize. What an
// upstream may ask of the host during the request (sampling, elicitation,
// roots) is decided by these capabilities, and how the answer is shaped
// (resultType, multi-round-trip results) by the revision.
type HostRequest struct {
	Version string
	Caps    map[string]json.RawMessage // the host's client capabilities, by name
}

// Stateless reports whether the request is at the stateless revision.
func (hr HostRequest) Stateless() bool { return protocol.IsStateless(hr.Version) }

// Can reports whether the host declared a client capability ("sampling",
// "elicitation", "roots") for the request.
func (hr HostRequest) Can(capability string) bool {
	_, ok := hr.Caps[capability]
	return ok
}

// ForwardedCaps is the part of the host's capabilities that upstreams may
// use through the trunk (sampling, elicitation, roots, extensions), encoded: an upstream
// is never told the host can do something it cannot.
// (It runs for every request of a stateless host, so it writes the bytes
// itself: the values are the host's, as sent.)
func (hr HostRequest) ForwardedCaps() json.RawMessage {
	out := make([]byte, 0, 64)
	out = append(out, '{')
	for _, k := range forwardedCapabilities {
		v, ok := hr.Caps[k]
		if !ok || !json.Valid(v) {
			continue
		}
		if k == extensions.Key {
			v = extensions.Forwarded(v)
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, '"')
		out = append(out, k...)
		out = append(out, '"', ':')
		out = append(out, bytes.TrimSpace(v)...)
	}
	return append(out, '}')
}

// extensions are the extensions the host declared for the request, by
// identifier, with their settings as sent (package extensions).
func (hr HostRequest) extensions() map[string]json.RawMessage { return extensions.Of(hr.Caps) }

// forwardedCapabilities are the client capabilities the trunk passes on,
// in the order they are written. The host's extensions reach servers as it
// declared them, but for those the trunk withholds (extensions.Forwarded):
// an extension is between the host and the server that offers it.
var forwardedCapabilities = []string{"elicitation", extensions.Key, "roots", "sampling"}
