package config

import (
	"encoding/json"
	"strings"

	"github.com/mcptrunk/mcptrunk/internal/protocol"
)

// protocolVersion decodes and validates a server's "protocolVersion": empty
// (auto) or a revision mcptrunk speaks. A typo must not silently mean auto,
// so an unknown value is an error that lists the accepted ones.
func (p *fieldErrs) protocolVersion(raw json.RawMessage, field string) string {
	v, ok := p.str(raw, field)
	if !ok || v == "" {
		return ""
	}
	if !protocol.Known(v) {
		p.addf(field, "unknown revision %q (want %s, or leave it out to negotiate)", v, strings.Join(protocol.Supported, ", "))
		return ""
	}
	return v
}
