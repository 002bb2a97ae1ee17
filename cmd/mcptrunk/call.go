package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// callCommand routes one tool call and prints the result as the upstream
// sent it (indented).
type callCommand struct{}

func (callCommand) run(ctx context.Context, env *environment) error {
	name, args := env.args[0], json.RawMessage(`{}`)
	if len(env.args) == 2 {
		args = json.RawMessage(env.args[1])
		if err := argumentsObject(args); err != nil {
			return usagef("arguments for %s must be a JSON object (such as '{\"query\": \"x\"}'): %v", name, err)
		}
	}
	params, err := json.Marshal(map[string]any{"name": name, "arguments": args})
	if err != nil {
		return err
	}
	t, err := env.startTrunk(ctx, oneShot{pick: func(cfg *config.Config) []config.Spec {
		return callServers(cfg, name, func(s config.Spec) ([]string, bool) { return upstream.CachedTools("", s, false) })
	}})
	if err != nil {
		return err
	}
	defer t.Close(context.WithoutCancel(ctx))

	res, err := t.HandleOneShot(ctx, "tools/call", params)
	if err != nil {
		rpcErr := jsonrpc.AsError(err)
		fmt.Fprintf(env.stderr, "mcptrunk: calling %s: %s (code %d)\n", name, rpcErr.Message, rpcErr.Code)
		return exitError(1)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, res, "", "  "); err != nil {
		out.Reset()
		out.Write(res)
	}
	out.WriteByte('\n')
	if _, err := env.stdout.Write(out.Bytes()); err != nil {
		return err
	}
	var result struct {
		IsError bool `json:"isError"`
	}
	if json.Unmarshal(res, &result) == nil && result.IsError {
		return exitError(1) // the tool reported an error: printed above
	}
	return nil
}

// argumentsObject checks that a tool's arguments are a JSON object, saying
// what they are instead (never a Go type's name).
func argumentsObject(args []byte) error {
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return fmt.Errorf("not valid JSON: %v", err)
	}
	kind := "null"
	switch v.(type) {
	case map[string]any:
		return nil
	case []any:
		kind = "an array"
	case string:
		kind = "a string"
	case float64:
		kind = "a number"
	case bool:
		kind = "a boolean"
	}
	return fmt.Errorf("got %s", kind)
}
