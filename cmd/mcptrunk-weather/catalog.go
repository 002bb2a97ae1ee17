package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

var planTripPrompt = mcp.NewPrompt("plan_trip",
	mcp.WithPromptDescription("Plan a trip around the forecast."),
	mcp.WithArgument("city", mcp.RequiredArgument()),
	mcp.WithArgument("days", mcp.ArgumentDescription("Trip length in days, 1 to 7; defaults to 3.")),
)

// planTrip returns the request as text followed by the forecast as an
// embedded resource, so prompts carry more than plain text through the proxy.
func planTrip(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	city := req.Params.Arguments["city"]
	if city == "" {
		return nil, fmt.Errorf("argument %q is required", "city")
	}
	days := 3
	if s := req.Params.Arguments["days"]; s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 7 {
			return nil, fmt.Errorf("argument %q must be 1 to 7, got %q", "days", s)
		}
		days = n
	}
	return mcp.NewGetPromptResult("Trip to "+city, []mcp.PromptMessage{
		mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(
			fmt.Sprintf("Plan a %d-day trip to %s. Pack for the forecast below.", days, city))),
		mcp.NewPromptMessage(mcp.RoleUser, mcp.NewEmbeddedResource(mcp.TextResourceContents{
			URI:      forecastURI(city),
			MIMEType: "text/plain",
			Text:     formatForecast(city, forecast(city, days)),
		})),
	}), nil
}

var stationsResource = mcp.NewResource("weather://stations", "stations",
	mcp.WithResourceDescription("Every weather station, as JSON."),
	mcp.WithMIMEType("application/json"),
)

func readStations(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	body, err := json.Marshal(stations)
	if err != nil {
		return nil, err
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "application/json", Text: string(body)}}, nil
}

var forecastTemplate = mcp.NewResourceTemplate("weather://forecast/{city}", "forecast",
	mcp.WithTemplateDescription("Three-day forecast for any city."),
	mcp.WithTemplateMIMEType("text/plain"),
)

// readForecast serves weather://forecast/{city}. mcp-go has already matched
// the URI and percent-decoded the city into Arguments["city"] as a []string.
func readForecast(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	var city string
	if v, ok := req.Params.Arguments["city"].([]string); ok && len(v) > 0 {
		city = v[0]
	}
	if city == "" {
		return nil, fmt.Errorf("no city in %q", req.Params.URI)
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{
		URI: req.Params.URI, MIMEType: "text/plain", Text: formatForecast(city, forecast(city, 3)),
	}}, nil
}

// forecastURI expands weather://forecast/{city}. RFC 6570 simple expansion
// percent-encodes every byte outside the unreserved set, which is stricter
// than url.PathEscape, and the template only matches URIs encoded that way.
func forecastURI(city string) string {
	var b strings.Builder
	b.WriteString("weather://forecast/")
	for _, c := range []byte(city) {
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || strings.IndexByte("-._~", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}
