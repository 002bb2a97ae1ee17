package registry

// Server is what mcptrunk reads of a server.json (schema 2025-12-11).
type Server struct {
	Name        string    `json:"name"`
	Title       string    `json:"title"`
	Description string    `json:"description"`
	Version     string    `json:"version"`
	Packages    []Package `json:"packages"`
	Remotes     []Remote  `json:"remotes"`
}

// Package is one way to run the server locally.
type Package struct {
	RegistryType string `json:"registryType"` // npm, pypi, oci, nuget, mcpb
	Identifier   string `json:"identifier"`
	Version      string `json:"version"`
	Transport    struct {
		Type string `json:"type"` // stdio, streamable-http, sse
	} `json:"transport"`
	RuntimeArguments     []Argument `json:"runtimeArguments"`
	PackageArguments     []Argument `json:"packageArguments"`
	EnvironmentVariables []Input    `json:"environmentVariables"`
}

// Remote is the server running elsewhere.
type Remote struct {
	Type      string           `json:"type"` // streamable-http, sse
	URL       string           `json:"url"`
	Headers   []Input          `json:"headers"`
	Variables map[string]Input `json:"variables"`
}

// Argument is one command-line argument: positional (a value) or named
// (--name, with a value or none).
type Argument struct {
	Input
	Type      string           `json:"type"` // positional, named
	ValueHint string           `json:"valueHint"`
	Variables map[string]Input `json:"variables"`
}

// Input is a value the user may have to give: an environment variable, a
// header, a URL variable or an argument's value.
type Input struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Value       string `json:"value"`
	Default     string `json:"default"`
	IsRequired  bool   `json:"isRequired"`
	IsSecret    bool   `json:"isSecret"`
}
