package translate

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/mcptrunk/mcptrunk/proxy/extensions"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// How the trunk describes itself to a host at the handshake of either
// revision (initialize, server/discover): from the servers behind it.

// Ready is a server that is up, or asleep with what it declared when last
// up (the catalog cache), and what it declared at its handshake.
type Ready struct {
	Name string
	Init upstream.InitResult
}

// ownInstructions is what the trunk says of itself in server/discover.
// Hosts put it before the model, which then calls tools by the names its
// host offers: many hosts put a prefix of their own in front of a server's
// tool names (Claude Code offers mcp__<its name for the trunk>__<ours>),
// and the trunk's prefix is configurable. So it names tools only by how
// their names end, which is true in every host.
const ownInstructions = "mcptrunk aggregates several MCP servers: each tool and prompt is offered under a name " +
	"ending in <server>__<name> (your host may show a prefix of its own in front), each resource as " +
	"mcptrunk://<server>/<uri>. The tool whose name ends in trunk__status reports every server's state."

// Bounds on the instructions of server/discover: each upstream's and the
// whole text. A server's instructions are its own business; they must not
// crowd out the others' or make the answer large.
const (
	maxServerInstructions = 2 << 10
	maxInstructions       = 16 << 10
)

// InitializeCapabilities are the trunk's capabilities in its answer to a
// 2025-era host's initialize. It is answered at once, so they are fixed
// but for the extensions, which are those of the servers ready now: up
// already (a trunk serving earlier sessions), or asleep with the
// capabilities they declared when last up.
func InitializeCapabilities(ready []Ready) map[string]any {
	caps := map[string]any{
		"tools":       map[string]bool{"listChanged": true},
		"prompts":     map[string]bool{"listChanged": true},
		"resources":   map[string]bool{"listChanged": true, "subscribe": true},
		"logging":     struct{}{},
		"completions": struct{}{},
	}
	if ext := declaredExtensions(ready); ext != nil {
		caps[extensions.Key] = ext
	}
	if tasks := declaredTasks(ready); tasks != nil {
		caps[extensions.TasksKey] = tasks
	}
	return caps
}

// DiscoveredCapabilities are the trunk's capabilities given the servers that
// are up. Tools, prompts and resources are always there, with listChanged:
// the trunk has tools and a resource of its own and announces every change
// of the aggregate. Resource subscriptions, logging and completions are
// declared only when some server behind the trunk offers them, since the
// trunk itself has none to offer.
func DiscoveredCapabilities(ready []Ready) map[string]any {
	var subscribe, logging, completions bool
	for _, c := range ready {
		caps := c.Init.Capabilities
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
	// Tasks only as the extension: the revision has no core tasks
	// capability (a 2025-11-25 server's tasks are declared as the extension,
	// declaredExtensions).
	if ext := declaredExtensions(ready); ext != nil {
		out[extensions.Key] = ext
	}
	return out
}

// declaredExtensions is the extensions member the trunk declares to a host:
// every extension at least one of the ready servers declares (nil: none),
// the tasks extension too when one takes 2025-11-25 tasks on tools/call.
func declaredExtensions(ready []Ready) json.RawMessage {
	declared := make([]map[string]json.RawMessage, 0, len(ready))
	for _, c := range ready {
		declared = append(declared, extensions.WithTasksExtension(c.Init.RawCapabilities))
	}
	return extensions.Union(declared)
}

// declaredTasks is the tasks capability the trunk declares to a host: that
// of the ready servers that declare one (nil: none does).
func declaredTasks(ready []Ready) json.RawMessage {
	caps := make([]json.RawMessage, 0, len(ready))
	for _, c := range ready {
		caps = append(caps, c.Init.RawCapabilities)
	}
	return extensions.Tasks(caps)
}

// DiscoveredInstructions are the trunk's own line, then each ready server's
// instructions under its name, clipped (see maxInstructions).
func DiscoveredInstructions(ready []Ready) string {
	var b strings.Builder
	b.WriteString(ownInstructions)
	for _, c := range ready {
		text := strings.TrimSpace(c.Init.Instructions)
		if text == "" {
			continue
		}
		entry := "\n\n" + c.Name + ": " + clipText(text, maxServerInstructions)
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

// ReadyOf are the clients that are up now, or asleep with the
// capabilities they declared when last up (cached), as the trunk's
// description of itself takes them.
func ReadyOf(clients []*upstream.Client) []Ready {
	var ready []Ready
	for _, c := range clients {
		if c.Listed() {
			ready = append(ready, Ready{Name: c.Name(), Init: c.Init()})
		}
	}
	return ready
}
