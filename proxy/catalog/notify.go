package catalog

import (
	"encoding/json"

	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/naming"
)

// ExportNotification rewrites what a server's notification names it by: a
// log message's logger becomes the server (or server/logger), an updated
// resource's URI its exported form. An unprefixed server's pass as they
// are: its URIs are the host's already, and the host knows its logger.
func ExportNotification(server, method string, params json.RawMessage, unprefixed bool) json.RawMessage {
	if unprefixed {
		return params
	}
	switch method {
	case "notifications/message":
		logger := server
		if inner, _ := rawjson.StringField(params, "logger"); inner != "" {
			logger = server + "/" + inner
		}
		if p, err := rawjson.ReplaceString(params, "logger", logger); err == nil {
			return p
		}
	case "notifications/resources/updated":
		if uri, _ := rawjson.StringField(params, "uri"); uri != "" {
			if p, err := rawjson.ReplaceString(params, "uri", naming.ResourceURI(server, uri)); err == nil {
				return p
			}
		}
	}
	return params
}
