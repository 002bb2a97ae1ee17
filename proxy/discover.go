package proxy

import (
	"context"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/proxy/extensions"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// ownInstructions is what the trunk says of itself in server/discover.
const ownInstructions = "mcptrunk aggregates several MCP servers: tools and prompts are named mcp__<server>__<name>, " +
	"resources mcptrunk://<server>/<uri>; mcp__trunk__status reports every server's state."

// Bounds on the instructions of server/discover: each upstream's and the
// whole text. A server's instructions are its own business; they must not
// crowd out the others' or make the answer large.
const (
	maxServerInstructions = 2 << 10
	maxInstructions       = 16 << 10
)

// discover answers server/discover, the stateless revision's first request
// (it replaces initialize). It starts the upstreams with the host's
// forwarded capabilities if initialize did not, and waits for them to
// settle (at most trunk.startupWait), so that the capabilities it declares
// are those of the servers behind it rather than a guess.
func (s *Server) discover(ctx context.Context, hr hostRequest) (json.RawMessage, error) {
	s.trunk.Start(hr.ForwardedCaps(), hr.Version)
	s.trunk.WaitSettled(ctx)
	ready := s.readyClients()
	serverInfo, _ := json.Marshal(map[string]string{"name": "mcptrunk", "version": s.trunk.version})
	return json.Marshal(map[string]any{
		protocol.FieldResultType: protocol.ResultTypeComplete,
		"_meta":                  map[string]json.RawMessage{protocol.MetaServerInfo: serverInfo},
		// The answer depends on which servers are up: never cache it.
		"ttlMs":                         0,
		"cacheScope":                    "private",
		protocol.FieldSupportedVersions: protocol.Supported,
		"capabilities":                  discoveredCapabilities(ready),
		"instructions":                  discoveredInstructions(ready),
	})
}

// readyClients are the upstreams that are up now, or asleep with the
// capabilities they declared when last up (cached).
func (s *Server) readyClients() []*upstream.Client {
	var ready []*upstream.Client
	for _, c := range s.trunk.clients() {
		if c.Listed() {
			ready = append(ready, c)
		}
	}
	return ready
}

// discoveredCapabilities are the trunk's capabilities given the servers that
// are up. Tools, prompts and resources are always there, with listChanged:
// the trunk has tools and a resource of its own and announces every change
// of the aggregate. Resource subscriptions, logging and completions are
// declared only when some server behind the trunk offers them, since the
// trunk itself has none to offer.
func discoveredCapabilities(ready []*upstream.Client) map[string]any {
	var subscribe, logging, completions bool
	for _, c := range ready {
		caps := c.Init().Capabilities
		subscribe = subscribe || caps.Subscribe
		logging = logging || caps.Logging
		completions = completions || caps.Completions
	}
	resources := map[string]bool{"listChanged": true}
	if subscribe {
		resources["subscribe"] = true
	}
	out := map[string]any{
		"tools":     map[string]bool{"listChanged": true},
		"prompts":   map[string]bool{"listChanged": true},
		"resources": resources,
	}
	if logging {
		out["logging"] = struct{}{}
	}
	if completions {
		out["completions"] = struct{}{}
	}
	if ext := declaredExtensions(ready); ext != nil {
		out[extensions.Key] = ext
	}
	return out
}

// declaredExtensions is the extensions member the trunk declares to a host:
// every extension at least one of the ready servers declares (nil: none).
func declaredExtensions(ready []*upstream.Client) json.RawMessage {
	declared := make([]map[string]json.RawMessage, 0, len(ready))
	for _, c := range ready {
		declared = append(declared, extensions.OfRaw(c.Init().RawCapabilities))
	}
	return extensions.Union(declared)
}

// discoveredInstructions are the trunk's own line, then each ready server's
// instructions under its name, clipped (see maxInstructions).
func discoveredInstructions(ready []*upstream.Client) string {
	var b strings.Builder
	b.WriteString(ownInstructions)
	for _, c := range ready {
		text := strings.TrimSpace(c.Init().Instructions)
		if text == "" {
			continue
		}
		entry := "\n\n" + c.Name() + ": " + clipText(text, maxServerInstructions)
		if b.Len()+len(entry) > maxInstructions {
			b.WriteString("\n\n(instructions of further servers left out: too long)")
			break
		}
		b.WriteString(entry)
	}
	return b.String()
}

// clip shortens text to at most n bytes, on a rune boundary, marking the cut.
func clipText(text string, n int) string {
	if len(text) <= n {
		return text
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return text[:cut] + "…"
}
