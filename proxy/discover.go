package proxy

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/proxy/translate"
)

// readyInView are the servers ready (translate.ReadyOf) that the session's
// caller sees anything of: what discovery and initialize tell a caller of
// the servers behind the trunk (their instructions, the extensions and
// tasks they declare) comes from these alone, so no answer names a
// server or an extension the caller's view leaves out.
func (s *Session) readyInView() []translate.Ready {
	ready := translate.ReadyOf(s.trunk.clients())
	view := s.trunk.state.Load().view(s)
	if !view.Restricted() {
		return ready
	}
	return slices.DeleteFunc(ready, func(r translate.Ready) bool { return !view.Shows(r.Name) })
}

// discover answers server/discover, the stateless revision's first request
// (it replaces initialize). It starts the upstreams with the host's
// forwarded capabilities if initialize did not, and waits for them to
// settle (at most trunk.startupWait), so that the capabilities it declares
// are those of the servers behind it rather than a guess.
func (s *Session) discover(ctx context.Context, hr hostRequest) (json.RawMessage, error) {
	s.trunk.Start(hr.ForwardedCaps(), hr.Version)
	s.trunk.WaitSettled(ctx)
	ready := s.readyInView()
	serverInfo, _ := json.Marshal(map[string]string{"name": "mcptrunk", "version": s.trunk.version})
	return json.Marshal(map[string]any{
		protocol.FieldResultType: protocol.ResultTypeComplete,
		"_meta":                  map[string]json.RawMessage{protocol.MetaServerInfo: serverInfo},
		// The answer depends on which servers are up: never cache it.
		"ttlMs":                         0,
		"cacheScope":                    "private",
		protocol.FieldSupportedVersions: protocol.Supported,
		"capabilities":                  translate.DiscoveredCapabilities(ready),
		"instructions":                  translate.DiscoveredInstructions(ready),
	})
}
