package catalog

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/naming"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// A completion's ref names a prompt by its exported name or a template by
// its exported URI; it resolves to the owner and the server's own name.
func TestCompletionTarget(t *testing.T) {
	cat := Build(Input{
		Servers: []Server{
			{Name: "notes", Spec: config.Spec{Name: "notes"}, Listed: true, Settled: true, Items: upstream.Catalog{
				Prompts:   catItems("name", "summarize"),
				Templates: catItems("uriTemplate", "file:///{path}"),
			}},
		},
		Policy: PolicyOf(config.TrunkOptions{Prefix: naming.Default.Prefix, MaxNameLength: 64}),
		Logger: slog.New(slog.DiscardHandler),
	})
	for _, tc := range []struct {
		ref, server, field, value, err string
	}{
		{ref: `{"type":"ref/prompt","name":"` + naming.Default.Name("notes", "summarize") + `"}`, server: "notes", field: "name", value: "summarize"},
		{ref: `{"type":"ref/resource","uri":"` + naming.ResourceURI("notes", "file:///{path}") + `"}`, server: "notes", field: "uri", value: "file:///{path}"},
		{ref: `{"type":"ref/prompt","name":"summarize"}`, err: `unknown prompt "summarize"`},
		{ref: `{"type":"ref/resource","uri":"file:///{path}"}`, err: `unknown resource "file:///{path}"`},
		{ref: `{"type":"ref/tool","name":"x"}`, err: `unknown ref type "ref/tool"`},
	} {
		server, field, value, err := cat.CompletionTarget(json.RawMessage(tc.ref))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.ref, err, tc.err)
			}
			continue
		}
		if err != nil || server != tc.server || field != tc.field || value != tc.value {
			t.Errorf("%s: %q %q %q %v, want %q %q %q", tc.ref, server, field, value, err, tc.server, tc.field, tc.value)
		}
	}
}

// A server's log message is told by its server in the logger, an updated
// resource by its exported URI; an unprefixed server's pass as they are.
func TestExportNotification(t *testing.T) {
	for _, c := range []struct {
		method, params, want string
		unprefixed           bool
	}{
		{"notifications/message", `{"level":"info","logger":"db","data":1}`, `{"level":"info","logger":"notes/db","data":1}`, false},
		{"notifications/message", `{"level":"info","data":1}`, `{"level":"info","data":1,"logger":"notes"}`, false},
		{"notifications/resources/updated", `{"uri":"file:///a"}`, `{"uri":"` + naming.ResourceURI("notes", "file:///a") + `"}`, false},
		{"notifications/resources/updated", `{"uri":"file:///a"}`, `{"uri":"file:///a"}`, true},
		{"notifications/progress", `{"progressToken":1}`, `{"progressToken":1}`, false},
	} {
		if got := string(ExportNotification("notes", c.method, json.RawMessage(c.params), c.unprefixed)); got != c.want {
			t.Errorf("%s %s: %s, want %s", c.method, c.params, got, c.want)
		}
	}
}
