package naming

// ModelNameLimit is the longest tool name the hosts' model APIs take:
// OpenAI-style APIs refuse a request with a longer one, and Anthropic's
// and Gemini's cut or refuse it too.
const ModelNameLimit = 64

// MinBudget is the shortest name budget the trunk fits names to (the
// config's smallest trunk.maxNameLength): below it a server's namespace
// leaves too little of a name for the item.
const MinBudget = 32

// AssumedTrunkName is the name a host is assumed to give the trunk's entry
// in its own config when the trunk is not told (the README's command lines
// and mcptrunk install use it): the trunk never learns the name a host
// knows it by.
const AssumedTrunkName = "trunk"

// HostConvention is how one MCP host names the tools of a server it
// connects to before its model is offered them.
type HostConvention struct {
	// Client is the clientInfo name the host sends (initialize, or the
	// _meta of each request at the stateless revision).
	Client string
	// Prefix is what the host puts before each tool name of the server it
	// knows as server.
	Prefix func(server string) string
	// Limit is the longest name the host offers its model unchanged.
	Limit int
}

func doubleUnderscore(server string) string { return "mcp__" + server + "__" }
func singleUnderscore(server string) string { return "mcp_" + server + "_" }

// hostConventions are the hosts known to prefix, each as its own source
// has it (docs/hosts.md cites them): Claude Code offers
// mcp__<server>__<tool>; Codex mcp__<server>__<tool>, replacing the end of
// a longer one with a SHA-1; Gemini CLI mcp_<server>_<tool>, cutting the
// middle of one longer than 63 characters.
var hostConventions = []HostConvention{
	{Client: "claude-code", Prefix: doubleUnderscore, Limit: ModelNameLimit},
	{Client: "codex-mcp-client", Prefix: doubleUnderscore, Limit: ModelNameLimit},
	{Client: "gemini-cli-mcp-client", Prefix: singleUnderscore, Limit: ModelNameLimit - 1},
}

// HostOf returns the convention of the host whose clientInfo name is
// client; false for a host not known to prefix the trunk's names.
func HostOf(client string) (HostConvention, bool) {
	for _, h := range hostConventions {
		if h.Client == client {
			return h, true
		}
	}
	return HostConvention{}, false
}

// Budget is the name budget under which every name the trunk exports is at
// most h.Limit characters long as h offers it, the trunk known to h as
// AssumedTrunkName; never below MinBudget.
func (h HostConvention) Budget() int {
	budget, _ := FitPrefix(h.Prefix(AssumedTrunkName), h.Limit)
	return budget
}

// HostBudget is HostOf(client).Budget(), and 0 (no constraint of the
// host's) for a host not known to prefix.
func HostBudget(client string) int {
	h, ok := HostOf(client)
	if !ok {
		return 0
	}
	return h.Budget()
}

// FitPrefix is the name budget under which prefix + name is at most limit
// characters long. fits is false when that would be below MinBudget: the
// budget is then MinBudget, and names behind that prefix may be longer
// than limit.
func FitPrefix(prefix string, limit int) (budget int, fits bool) {
	budget = limit - len(prefix)
	if budget < MinBudget {
		return MinBudget, false
	}
	return budget, true
}
