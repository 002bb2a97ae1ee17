package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Argument types: the handlers bind them with mcp.NewTypedToolHandler, unlike
// mcptrunk-notes, which reads the argument map.
type (
	searchArgs struct {
		City string `json:"city"`
	}
	forecastArgs struct {
		City string `json:"city"`
		Days *int   `json:"days"` // nil means the schema default, 3
	}
	progressArgs struct {
		Steps      int  `json:"steps"`
		IntervalMS *int `json:"interval_ms"` // nil means 10
	}
)

const maxSteps = 1000

// tools returns the weather tools with their handlers.
func tools(logs *slog.Logger) []server.ServerTool {
	ts := []server.ServerTool{{
		Tool: mcp.NewTool("search",
			mcp.WithDescription("Find weather stations in a city."),
			mcp.WithString("city", mcp.Required(), mcp.Description("City name or part of it.")),
			mcp.WithReadOnlyHintAnnotation(true),
		),
		Handler: mcp.NewTypedToolHandler(func(_ context.Context, _ mcp.CallToolRequest, a searchArgs) (*mcp.CallToolResult, error) {
			found := stationsIn(a.City)
			if len(found) == 0 {
				return mcp.NewToolResultText(fmt.Sprintf("no stations in %q", a.City)), nil
			}
			lines := make([]string, len(found))
			for i, st := range found {
				lines[i] = fmt.Sprintf("%s %s (%s)", st.ID, st.Name, st.City)
			}
			return mcp.NewToolResultText(strings.Join(lines, "\n")), nil
		}),
	}, {
		Tool: mcp.NewTool("forecast",
			mcp.WithDescription("Forecast for a city, 1 to 7 days."),
			mcp.WithString("city", mcp.Required()),
			mcp.WithInteger("days", mcp.Min(1), mcp.Max(7), mcp.DefaultNumber(3)),
			mcp.WithReadOnlyHintAnnotation(true),
		),
		Handler: mcp.NewTypedToolHandler(func(_ context.Context, _ mcp.CallToolRequest, a forecastArgs) (*mcp.CallToolResult, error) {
			days := 3
			if a.Days != nil {
				days = *a.Days
			}
			if a.City == "" || days < 1 || days > 7 {
				return mcp.NewToolResultError("need a city and 1 to 7 days"), nil
			}
			return mcp.NewToolResultText(formatForecast(a.City, forecast(a.City, days))), nil
		}),
	}, {
		Tool: mcp.NewTool("progress",
			mcp.WithDescription("Count through steps, reporting progress for each when the call has a progressToken."),
			mcp.WithInteger("steps", mcp.Required(), mcp.Min(0), mcp.Max(maxSteps)),
			mcp.WithInteger("interval_ms", mcp.Min(0), mcp.Max(10000), mcp.DefaultNumber(10),
				mcp.Description("Pause after each step; long pauses make a call to cancel.")),
			mcp.WithReadOnlyHintAnnotation(true),
		),
		Handler: mcp.NewTypedToolHandler(func(ctx context.Context, req mcp.CallToolRequest, a progressArgs) (*mcp.CallToolResult, error) {
			return countSteps(ctx, req, a, logs)
		}),
	}}
	// Every tool only computes fake data, so none is destructive or reaches
	// the outside world; mcp.NewTool assumes both unless told otherwise.
	for i := range ts {
		ts[i].Tool.Annotations.DestructiveHint = mcp.ToBoolPtr(false)
		ts[i].Tool.Annotations.OpenWorldHint = mcp.ToBoolPtr(false)
	}
	return ts
}

// countSteps is the progress tool. mcp-go writes notifications from a
// separate goroutine, so the pause after each one also gives it time to go
// out before the result; with interval_ms 0 the order is not guaranteed.
func countSteps(ctx context.Context, req mcp.CallToolRequest, a progressArgs, logs *slog.Logger) (*mcp.CallToolResult, error) {
	interval := 10 * time.Millisecond
	if a.IntervalMS != nil {
		interval = time.Duration(*a.IntervalMS) * time.Millisecond
	}
	if a.Steps < 0 || a.Steps > maxSteps || interval < 0 {
		return mcp.NewToolResultErrorf("steps must be 0 to %d and interval_ms >= 0", maxSteps), nil
	}
	var token mcp.ProgressToken
	if req.Params.Meta != nil {
		token = req.Params.Meta.ProgressToken
	}
	srv := server.ServerFromContext(ctx)
	for i := 1; i <= a.Steps; i++ {
		if token != nil {
			err := srv.SendNotificationToClient(ctx, string(mcp.MethodNotificationProgress), map[string]any{
				"progressToken": token,
				"progress":      i,
				"total":         a.Steps,
				"message":       fmt.Sprintf("step %d of %d", i, a.Steps),
			})
			if err != nil {
				logs.Warn("progress notification dropped", "step", i, "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(interval):
		}
	}
	return mcp.NewToolResultText("done"), nil
}
