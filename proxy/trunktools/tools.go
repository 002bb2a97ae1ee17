package trunktools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/naming"
	"github.com/mcptrunk/mcptrunk/proxy/catalog"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// The trunk's own tools and resource live under the reserved server name
// "trunk": what a host (or the model in it) needs to see the servers behind
// the trunk, wait for them, and, when the config asks, reach resources
// through tools and search a large catalog.
var statusURI = naming.ResourceURI(naming.TrunkServer, "status")

// ownTool is one of the trunk's tools: its upstream-style name and the rest
// of its definition. runOwnTool says what runs it.
type ownTool struct {
	name string
	def  string // the tool object without its name, as JSON members
}

const readOnlyAnnotations = `"annotations":{"readOnlyHint":true,"openWorldHint":false}`

var (
	statusTool = ownTool{"status", `"title":"mcptrunk status",` +
		`"description":"Report every MCP server behind mcptrunk: state (starting, ready, sleeping, restarting, failed, disabled), uptime, restarts, last error, counts of tools, prompts and resources, call statistics, and for servers that start on demand the catalog cache's age and the time since last use.",` +
		`"inputSchema":{"type":"object","properties":{}},` + readOnlyAnnotations}
	waitTool = ownTool{"wait_for_servers", `"title":"Wait for MCP servers",` +
		`"description":"Wait (at most timeoutSeconds, default 5) for MCP servers that are still starting or restarting, then report which are ready, failed or still pending.",` +
		`"inputSchema":{"type":"object","properties":{` +
		`"servers":{"type":"array","items":{"type":"string"},"description":"Server names to wait for; all when omitted."},` +
		`"timeoutSeconds":{"type":"number","minimum":0,"maximum":60,"description":"How long to wait at most (default 5)."}}},` + readOnlyAnnotations}
)

// toolsUnder are the trunk's tools under pol.
func toolsUnder(pol catalog.Policy) []ownTool {
	tools := []ownTool{statusTool, waitTool}
	if pol.ResourceTools {
		tools = append(tools, listResourcesTool, readResourceTool)
	}
	if pol.ToolSearch {
		tools = append(tools, searchTool, callTool)
	}
	if pol.CodeMode {
		tools = append(tools, runCodeTool, codeAPITool)
	}
	return tools
}

// Entries are the trunk's own tools and resources, in catalog form.
func Entries(pol catalog.Policy) (tools, resources []catalog.Entry) {
	own := toolsUnder(pol)
	raws := make([]string, len(own))
	for i, o := range own {
		raws[i] = o.name
	}
	// The trunk's names keep to the budget like every other name (a long
	// trunk.prefix can push them over it); a budget that leaves too little
	// room for any item gets them in their plain form.
	names, err := pol.Scheme.Assign(naming.TrunkServer, raws, pol.MaxLen)
	for _, o := range own {
		name := pol.Scheme.Name(naming.TrunkServer, o.name)
		if err == nil {
			name = names[o.name]
		}
		nameJSON, _ := json.Marshal(name)
		tools = append(tools, catalog.Entry{Exported: name, Server: naming.TrunkServer, Raw: o.name,
			Item: json.RawMessage(`{"name":` + string(nameJSON) + `,` + o.def + `}`)})
	}
	resources = []catalog.Entry{
		{Exported: statusURI, Server: naming.TrunkServer, Raw: "status", Item: json.RawMessage(`{"uri":"` + statusURI + `",` +
			`"name":"status","title":"mcptrunk status","mimeType":"application/json",` +
			`"description":"Every MCP server behind mcptrunk with its state, counts and call statistics."}`)},
	}
	return tools, resources
}

// Trunk is what the trunk's own tools need of the trunk.
type Trunk interface {
	// WaitSettled waits until the servers have started or failed (or
	// trunk.startupWait has passed).
	WaitSettled(ctx context.Context)
	// Servers are the configured servers (none before start), Server one
	// of them by name.
	Servers() []*upstream.Client
	Server(name string) (*upstream.Client, bool)
	// Catalog is the catalog in force.
	// Catalog is the catalog as the caller of ctx's request sees it.
	Catalog(ctx context.Context) *catalog.Catalog
	// Status is the trunk's status report now.
	Status() StatusReport
	// ReadResource and CallTool route a resources/read and a tools/call
	// as the host's would be.
	ReadResource(ctx context.Context, params json.RawMessage) (json.RawMessage, error)
	CallTool(ctx context.Context, params json.RawMessage) (json.RawMessage, error)
	// CallInRun routes a tools/call that the code-mode run with id run
	// makes on behalf of the caller of ctx: as the caller's own, observed
	// (audited) as one with the run's id.
	CallInRun(ctx context.Context, run string, params json.RawMessage) (json.RawMessage, error)
	// CodeMode is trunk.codeMode in force, its defaults filled in.
	CodeMode() config.CodeMode
}

// runner runs the trunk's tools against the trunk.
type runner struct{ Trunk }

// Call runs the trunk's tool with upstream-style name raw.
func Call(ctx context.Context, tr Trunk, raw string, params json.RawMessage) (json.RawMessage, error) {
	t := runner{tr}
	args := json.RawMessage(`{}`)
	if start, end, found, err := rawjson.FieldSpan(params, "arguments"); err == nil && found && string(params[start:end]) != "null" {
		args = params[start:end]
	}
	switch raw {
	case statusTool.name:
		return toolResult(t.statusFor(ctx))
	case waitTool.name:
		return t.runWaitTool(ctx, args)
	case listResourcesTool.name:
		return t.runListResources(ctx, args)
	case readResourceTool.name:
		return t.runReadResource(ctx, args)
	case searchTool.name:
		return t.runSearchTools(ctx, args)
	case callTool.name:
		return t.runCallTool(ctx, args)
	case runCodeTool.name:
		return t.runCode(ctx, args)
	case codeAPITool.name:
		return t.codeAPI(ctx)
	}
	return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "unknown tool %q: mcptrunk has no such tool", raw)
}

func (t runner) runWaitTool(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	var a struct {
		Servers        []string `json:"servers"`
		TimeoutSeconds *float64 `json:"timeoutSeconds"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return catalog.ToolError("wait_for_servers: invalid arguments: %v", err)
	}
	timeout := 5 * time.Second
	if s := a.TimeoutSeconds; s != nil {
		timeout = time.Duration(min(max(*s, 0), 60) * float64(time.Second))
	}
	return toolResult(t.waitForServers(ctx, a.Servers, timeout))
}

// StatusReport is the payload of the status tool and resource.
type StatusReport struct {
	Servers []upstream.Status `json:"servers"`
	// MaxMessageBytes is the host's message limit in force, and
	// DroppedNotifications how many notifications it has cost.
	MaxMessageBytes      int   `json:"maxMessageBytes"`
	DroppedNotifications int64 `json:"droppedNotifications"`
	// UnattributedNotifications counts notifications of shared servers
	// that went to nobody: the trunk could not tell whose call they
	// concern (no session, or several, had calls in flight on the server).
	UnattributedNotifications int64 `json:"unattributedNotifications"`
	// Pinning is trunk.pin at work: drift, withheld items and findings.
	Pinning *catalog.PinReport `json:"pinning"`
	// ParkedCalls counts a stateless host's calls to 2025 upstreams that
	// wait between rounds of input (see translate/mrtr_park.go).
	ParkedCalls int `json:"parkedCalls"`
	// Conflicts are items withheld because another server exports the
	// same name or URI (servers with "namespace": false, unprefixed.go).
	Conflicts []catalog.Conflict `json:"conflicts,omitempty"`
	// KeptResults and KeptResultBytes are the tool results cut to their
	// maxResultBytes whose wholes the trunk keeps for their callers now,
	// all callers' together.
	KeptResults     int   `json:"keptResults"`
	KeptResultBytes int64 `json:"keptResultBytes"`
	// StateStore is trunk.state's store, when it is a file or Redis:
	// whether it answers (its location and the why are the operators',
	// on the status page).
	StateStore *StateStoreStatus `json:"stateStore,omitempty"`
}

// StateStoreStatus is the state store as any caller may see it: its kind,
// whether it answered last, and since when.
type StateStoreStatus struct {
	Kind  string    `json:"kind"`
	Up    bool      `json:"up"`
	Since time.Time `json:"since"`
}

// statusFor is the status report as the caller of ctx may read it: the
// servers its view shows (catalog.Catalog.Shows), and the pinning and
// name conflicts of those alone; the counters are the trunk's.
func (t runner) statusFor(ctx context.Context) StatusReport {
	r := t.Status()
	cat := t.Catalog(ctx)
	if !cat.Restricted() {
		return r
	}
	servers := make([]upstream.Status, 0, len(r.Servers))
	for _, s := range r.Servers {
		if cat.Shows(s.Server) {
			servers = append(servers, s)
		}
	}
	r.Servers = servers
	r.Pinning = r.Pinning.Of(cat.Shows)
	var conflicts []catalog.Conflict
	for _, c := range r.Conflicts {
		if cat.Shows(c.Server) && (c.Owner == naming.TrunkServer || cat.Shows(c.Owner)) {
			conflicts = append(conflicts, c)
		}
	}
	r.Conflicts = conflicts
	return r
}

// waitReport says where each server awaited stands.
type waitReport struct {
	Ready []string `json:"ready"`
	// Sleeping servers are not running and start on their first request.
	Sleeping []string `json:"sleeping,omitempty"`
	Failed   []string `json:"failed"`
	Pending  []string `json:"pending"`
	Unknown  []string `json:"unknown,omitempty"`
}

// waitForServers polls the servers named (all when none) until none is
// starting or restarting, or timeout passes, or ctx ends. It names only
// servers the caller's view shows: a hidden one is unknown, as a missing
// one is. A server not listed yet, whose items no rule has decided, is
// waited for but named only once it is shown.
func (t runner) waitForServers(ctx context.Context, names []string, timeout time.Duration) waitReport {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		r := waitReport{Ready: []string{}, Failed: []string{}, Pending: []string{}}
		cat := t.Catalog(ctx)
		undecided := false // a server not listed yet is still starting
		for _, c := range t.Servers() {
			if len(names) > 0 && !slices.Contains(names, c.Name()) {
				continue
			}
			state, _ := c.State()
			pending := state == upstream.StateStarting || state == upstream.StateRestarting
			if !cat.Shows(c.Name()) {
				undecided = undecided || (pending && !c.Listed())
				continue
			}
			switch {
			case state == upstream.StateReady:
				r.Ready = append(r.Ready, c.Name())
			case state == upstream.StateSleeping:
				r.Sleeping = append(r.Sleeping, c.Name())
			case pending:
				r.Pending = append(r.Pending, c.Name())
			default:
				r.Failed = append(r.Failed, c.Name())
			}
		}
		for _, n := range names {
			if _, ok := t.Server(n); !ok || !cat.Shows(n) {
				r.Unknown = append(r.Unknown, n)
			}
		}
		if len(r.Pending) == 0 && !undecided {
			return r
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			return r
		case <-ctx.Done():
			return r
		}
	}
}

// toolResult wraps a report as a tool result: the JSON as text for hosts
// that only read text, and as structuredContent for those that read that.
func toolResult(v any) (json.RawMessage, error) { return report(v, true) }

// toolText wraps a report as a tool result of one text block of JSON.
func toolText(v any) (json.RawMessage, error) { return report(v, false) }

func report(v any, structured bool) (json.RawMessage, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encoding a report: %w", err)
	}
	text, _ := json.Marshal(string(body))
	out := `{"content":[{"type":"text","text":` + string(text) + `}]`
	if structured {
		out += `,"structuredContent":` + string(body)
	}
	return json.RawMessage(out + `}`), nil
}

// ReadResource answers resources/read for the trunk's status resource.
// It reports what the status tool does to the caller of ctx.
func ReadResource(ctx context.Context, tr Trunk, uri string) (json.RawMessage, error) {
	t := runner{tr}
	if uri != statusURI {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "unknown resource %q: mcptrunk offers only %s", uri, statusURI)
	}
	body, err := json.Marshal(t.statusFor(ctx))
	if err != nil {
		return nil, err
	}
	text, _ := json.Marshal(string(body))
	uriJSON, _ := json.Marshal(uri)
	return json.RawMessage(`{"contents":[{"uri":` + string(uriJSON) + `,"mimeType":"application/json","text":` + string(text) + `}]}`), nil
}
