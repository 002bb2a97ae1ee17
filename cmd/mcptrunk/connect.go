package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/naming"
	"github.com/mcptrunk/mcptrunk/proxy"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// connectCommand (also "bridge") is a stdio MCP server for hosts that run
// only stdio servers: it forwards everything to one remote MCP server under
// the server's own names. It is a trunk like serve's, over stdio, whose
// config is made in memory from the flags: one remote server with
// "namespace": false. So the remote server gets everything the trunk does
// for any server (revisions translated, OAuth when no Authorization header
// is given, restarts, message limits), and the host sees it as it is.
type connectCommand struct {
	headers         headerFlags
	sse             bool
	transport       string
	name            string
	protocolVersion string
}

func (c *connectCommand) flags(fs *flagSet) {
	fs.Var(&c.headers, "header", "a `Name: value` header sent with every request (repeatable; ${VAR} is taken from the environment)")
	fs.BoolVar(&c.sse, "sse", false, "the server speaks the legacy HTTP+SSE transport (as --type sse)")
	fs.StringVar(&c.transport, "type", "", "the server's transport: http (streamable HTTP, the default) or sse")
	fs.StringVar(&c.name, "name", "", "the server's name in logs and the status (default: from the URL's host)")
	fs.StringVar(&c.protocolVersion, "protocol-version", "", "the MCP revision to speak to the server (default: negotiated)")
}

func (c *connectCommand) run(ctx context.Context, env *environment) error {
	logger, err := env.logger(slog.LevelInfo)
	if err != nil {
		return err
	}
	cfg, err := c.config(env.args[0], os.LookupEnv)
	if err != nil {
		return err
	}
	out := env.stdout
	if out == os.Stdout {
		// stdout is the protocol channel, as for serve.
		os.Stdout = os.Stderr
	}
	spec := cfg.Servers[0]
	logger.Info("mcptrunk connecting", "server", spec.Name, "type", string(spec.Type), "headers", len(spec.Headers), "oauth", spec.UsesOAuth(), "version", version())
	t := proxy.New(cfg, &proxy.Options{Logger: logger, Version: version(), Restart: upstream.DefaultRestartPolicy})
	return t.Serve(ctx, env.stdin, out)
}

// config is the trunk's config for rawURL: one remote server, unprefixed,
// put through config.Parse as if it had been written in a file, so that it
// is checked and expanded exactly as the file's servers are (and its errors
// never quote a header's value or the URL).
func (c *connectCommand) config(rawURL string, lookup func(string) (string, bool)) (*config.Config, error) {
	transport := c.transport
	switch {
	case c.sse && transport != "" && !strings.EqualFold(transport, string(config.TransportSSE)):
		return nil, usagef("--sse and --type %q disagree", transport)
	case c.sse:
		transport = string(config.TransportSSE)
	case transport == "":
		transport = string(config.TransportHTTP)
	}
	name := c.name
	if name == "" {
		name = naming.ServerNameForURL(rawURL)
	}
	entry := map[string]any{"type": transport, "url": rawURL, "namespace": false}
	if len(c.headers) > 0 {
		headers, err := c.headers.byName()
		if err != nil {
			return nil, err
		}
		entry["headers"] = headers
	}
	if c.protocolVersion != "" {
		entry["protocolVersion"] = c.protocolVersion
	}
	doc, err := json.Marshal(map[string]any{"mcpServers": map[string]any{name: entry}})
	if err != nil {
		return nil, err
	}
	return config.ParseAll(bytes.NewReader(doc), lookup)
}

// headerFlags are the --header flags, in order: each "Name: value" (or
// Name=value: a header's name holds neither character).
type headerFlags []string

// String is "" for none, which help then shows no default for.
func (h *headerFlags) String() string {
	if len(*h) == 0 {
		return ""
	}
	return fmt.Sprintf("%d headers", len(*h))
}

// Set takes any text: the flag package would quote a refused value in its
// error, and a header's value may be a secret. byName checks the form.
func (h *headerFlags) Set(s string) error {
	*h = append(*h, s)
	return nil
}

// byName is the headers as the config has them: name -> value, the value
// without the spaces around it. The errors name a header by its position
// or its name, never by its value; config.Parse checks the name and value
// further.
func (h headerFlags) byName() (map[string]string, error) {
	m := make(map[string]string, len(h))
	for i, s := range h {
		at := strings.IndexAny(s, ":=")
		if at < 0 || strings.TrimSpace(s[:at]) == "" {
			return nil, usagef(`--header #%d: want "Name: value" (the name, a colon, the value) or Name=value`, i+1)
		}
		name, value := strings.TrimSpace(s[:at]), s[at+1:]
		for prev := range m {
			if strings.EqualFold(prev, name) {
				return nil, usagef("--header: %q is given twice", name)
			}
		}
		m[name] = strings.TrimSpace(value)
	}
	return m, nil
}
