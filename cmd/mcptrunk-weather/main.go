// Command mcptrunk-weather is an example stdio MCP server that serves fake,
// deterministic weather. mcptrunk's demo and tests run it next to
// mcptrunk-notes: its "search" tool has the same raw name as notes' but a
// different schema, which is what mcptrunk's mcp__<server>__<name> naming is
// for, and its "progress" tool emits notifications/progress for
// progress-forwarding tests. It never touches the network.
//
// stdout carries the MCP protocol; logs go to stderr.
package main

import (
	"context"
	"errors"
	"log/slog"
	"os"

	"github.com/mark3labs/mcp-go/server"
)

func main() {
	logs := slog.New(slog.NewTextHandler(os.Stderr, nil))

	s := server.NewMCPServer("weather", "0.1.0",
		server.WithToolCapabilities(false),
		server.WithPromptCapabilities(false),
		server.WithResourceCapabilities(false, false),
	)
	s.AddTools(tools(logs)...)
	s.AddPrompt(planTripPrompt, planTrip)
	s.AddResource(stationsResource, readStations)
	s.AddResourceTemplate(forecastTemplate, readForecast)

	err := server.ServeStdio(s, server.WithErrorLogger(slog.NewLogLogger(logs.Handler(), slog.LevelError)))
	if err != nil && !errors.Is(err, context.Canceled) {
		logs.Error("serve", "err", err)
		os.Exit(1)
	}
}
