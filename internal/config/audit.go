package config

import "encoding/json"

// Audit is the audit log of the host's tool calls, prompt gets and resource
// reads (trunk.audit; written by internal/audit).
type Audit struct {
	// File is the log's path, relative to the config's directory when
	// loaded from a file, like trunk.lockFile. Empty turns the log off.
	File string `json:"file,omitempty"`
	// Arguments adds each request's arguments to its line, with the values
	// of keys that look secret redacted. Off by default: arguments are the
	// user's data.
	Arguments bool `json:"arguments,omitempty"`
	// MaxBytes is the size past which the file is rotated
	// (DefaultAuditMaxBytes when zero; at least MinAuditMaxBytes).
	MaxBytes int `json:"maxBytes,omitempty"`
}

// DefaultAuditMaxBytes is the audit file's size before it is rotated
// unless the config says otherwise: large enough for days of calls, small
// enough to open in an editor.
const DefaultAuditMaxBytes = 10 << 20

// MinAuditMaxBytes is the least trunk.audit.maxBytes accepts: a smaller file
// would rotate every few lines, and with three old files kept lose the
// history an audit log is for.
const MinAuditMaxBytes = 64 << 10

// audit decodes and validates trunk.audit. Absent means off; an audit
// object must name its file, since one without would silently log nothing.
func (p *fieldErrs) audit(raw json.RawMessage, field string) Audit {
	var ra rawAudit
	if !p.object(raw, field, &ra) {
		return Audit{}
	}
	var a Audit
	if f, ok := p.str(ra.File, field+".file"); ok {
		if f == "" {
			p.addf(field+".file", "is required: the audit log's path")
		}
		a.File = f
	}
	a.Arguments = p.boolean(ra.Arguments, field+".arguments")
	a.MaxBytes = DefaultAuditMaxBytes
	if n, ok := p.integer(ra.MaxBytes, field+".maxBytes"); ok && n != 0 {
		if n < MinAuditMaxBytes {
			p.addf(field+".maxBytes", "must be at least %d, got %d", MinAuditMaxBytes, n)
		}
		a.MaxBytes = n
	}
	return a
}
