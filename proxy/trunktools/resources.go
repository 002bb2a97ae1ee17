package trunktools

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/naming"
	"github.com/mcptrunk/mcptrunk/proxy/catalog"
)

// Resource tools, for hosts that handle tools but not resources
// (trunk.resourceTools): list what every server offers, and read one
// resource with text inline and binary content saved to a file.
var (
	listResourcesTool = ownTool{"list_resources", `"title":"List MCP resources",` +
		`"description":"List the resources and resource templates of the MCP servers behind mcptrunk, each with its server. Read one with read_resource using its uri.",` +
		`"inputSchema":{"type":"object","properties":{"server":{"type":"string","description":"Only this server's resources."}}},` + readOnlyAnnotations}
	readResourceTool = ownTool{"read_resource", `"title":"Read an MCP resource",` +
		`"description":"Read a resource by the uri list_resources gave (mcptrunk://<server>/<uri>), or by server and the server's own uri. Text comes inline; binary content is saved to a temporary file whose path is returned.",` +
		`"inputSchema":{"type":"object","properties":{"uri":{"type":"string"},"server":{"type":"string"}},"required":["uri"]},` + readOnlyAnnotations}
)

type listedResource struct {
	Server   string          `json:"server"`
	Resource json.RawMessage `json:"resource"`
}

func (t runner) runListResources(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	server, _ := rawjson.StringField(args, "server")
	t.WaitSettled(ctx)
	cat := t.Catalog(ctx)
	if server != "" {
		if _, ok := t.Server(server); !ok || !cat.Shows(server) {
			var names []string
			for _, c := range t.Servers() {
				if cat.Shows(c.Name()) {
					names = append(names, c.Name())
				}
			}
			return catalog.ToolError("list_resources: no server %q is configured; the servers are: %s", server, strings.Join(names, ", "))
		}
	}
	out := struct {
		Resources []listedResource `json:"resources"`
		Templates []listedResource `json:"resourceTemplates"`
		// Unavailable names servers whose resources are missing from the
		// list because they are not ready: the others are listed anyway.
		Unavailable []string `json:"unavailable,omitempty"`
	}{Resources: []listedResource{}, Templates: []listedResource{}}
	for _, pair := range []struct {
		l   catalog.List
		dst *[]listedResource
	}{{catalog.ListResources, &out.Resources}, {catalog.ListTemplates, &out.Templates}} {
		for _, e := range cat.Lists[pair.l] {
			if e.Server != naming.TrunkServer && (server == "" || e.Server == server) {
				*pair.dst = append(*pair.dst, listedResource{Server: e.Server, Resource: e.Item})
			}
		}
	}
	for _, c := range t.Servers() {
		if !c.Listed() && (server == "" || c.Name() == server) && cat.Shows(c.Name()) && c.Init().Capabilities.Resources {
			out.Unavailable = append(out.Unavailable, c.Name())
		}
	}
	return toolResult(out)
}

func (t runner) runReadResource(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	uri, _ := rawjson.StringField(args, "uri")
	server, _ := rawjson.StringField(args, "server")
	if uri == "" {
		return catalog.ToolError("read_resource: the uri argument is required")
	}
	if _, _, ok := naming.SplitResourceURI(uri); !ok && server != "" && !t.Catalog(ctx).Unprefixed(server) {
		uri = naming.ResourceURI(server, uri)
	}
	params, _ := json.Marshal(map[string]string{"uri": uri})
	res, err := t.ReadResource(ctx, params)
	if err != nil {
		var rpcErr *jsonrpc.Error
		if errors.As(err, &rpcErr) && rpcErr.Code != jsonrpc.CodeUnavailable {
			return catalog.ToolError("reading %s failed: %s. The resource may be gone: run list_resources again to refresh the list.", uri, rpcErr.Message)
		}
		return catalog.ToolError("reading %s failed: %v", uri, err)
	}
	return readResultAsTool(res)
}

// readResultAsTool turns a resources/read result into tool content: text
// parts as text; blob parts decoded into temporary files, named by path.
func readResultAsTool(res json.RawMessage) (json.RawMessage, error) {
	var r struct {
		Contents []struct {
			URI      string  `json:"uri"`
			MimeType string  `json:"mimeType"`
			Text     *string `json:"text"`
			Blob     *string `json:"blob"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return catalog.ToolError("the server's answer is not a resource: %v", err)
	}
	type text struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	var content []text
	for _, c := range r.Contents {
		switch {
		case c.Text != nil:
			content = append(content, text{"text", *c.Text})
		case c.Blob != nil:
			path, err := saveBlob(c.URI, *c.Blob)
			if err != nil {
				return catalog.ToolError("saving the binary content of %s: %v", c.URI, err)
			}
			content = append(content, text{"text", "Binary content of " + c.URI + " (" + c.MimeType + ") saved to " + path})
		}
	}
	if content == nil {
		content = []text{{"text", "(the resource is empty)"}}
	}
	out, err := json.Marshal(map[string]any{"content": content})
	return out, err
}

// saveBlob writes base64 data to a new file in the temporary directory,
// readable only by the user, and returns its path.
func saveBlob(uri, data string) (string, error) {
	raw, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return "", err
	}
	f, err := os.CreateTemp("", "mcptrunk-resource-*"+blobExt(uri))
	if err != nil {
		return "", err
	}
	if _, err := f.Write(raw); err != nil {
		f.Close()
		return "", err
	}
	return f.Name(), f.Close()
}

// blobExt keeps a plausible extension from the URI, so the file opens with
// the right program.
func blobExt(uri string) string {
	ext := filepath.Ext(uri)
	if len(ext) > 8 || strings.ContainsAny(ext, `/\?#:`) {
		return ""
	}
	return ext
}

// ReadToolName is the name the caller whose view cat is knows the trunk's
// read_resource tool by, or "" when trunk.resourceTools leaves it out.
func ReadToolName(cat *catalog.Catalog) string {
	for exported, raw := range cat.Tools[naming.TrunkServer] {
		if raw == readResourceTool.name {
			return exported
		}
	}
	return ""
}
