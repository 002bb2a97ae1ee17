package config

import (
	"encoding/json"

	"github.com/mcptrunk/mcptrunk/naming"
)

// parseTrunk decodes, defaults and validates the "trunk" options. A zero
// (or absent) value means the default; lookup expands trunk.http.auth.
func parseTrunk(raw json.RawMessage, lookup func(string) (string, bool)) (TrunkOptions, []error) {
	p := &fieldErrs{}
	var t TrunkOptions
	var rt rawTrunk
	if !rawAbsent(raw) {
		if rawKind(raw) != "object" || json.Unmarshal(raw, &rt) != nil {
			p.addf("trunk", "want object, got %s", rawKind(raw))
		}
	}
	t.StartupWait = p.duration(rt.StartupWait, "trunk.startupWait")
	if t.StartupWait == 0 {
		t.StartupWait = Duration(defaultStartupWait)
	}
	if n, ok := p.integer(rt.Concurrency, "trunk.concurrency"); ok {
		switch {
		case n == 0: // absent or explicitly 0
			t.Concurrency = defaultConcurrency
		case n < 1:
			p.addf("trunk.concurrency", "must be >= 1, got %d", n)
		default:
			t.Concurrency = n
		}
	}
	if n, ok := p.integer(rt.MaxNameLength, "trunk.maxNameLength"); ok {
		switch {
		case n == 0: // absent or explicitly 0
			t.MaxNameLength = defaultMaxNameLength
		case n < minMaxNameLength || n > maxMaxNameLength:
			p.addf("trunk.maxNameLength", "must be between %d and %d, got %d", minMaxNameLength, maxMaxNameLength, n)
		default:
			t.MaxNameLength = n
		}
	}
	t.Prefix = naming.Prefix
	if !rawAbsent(rt.Prefix) {
		if prefix, ok := p.str(rt.Prefix, "trunk.prefix"); ok {
			if err := naming.CheckPrefix(prefix); err != nil {
				p.add("trunk.prefix", err)
			}
			t.Prefix = prefix
		}
	}
	t.ReadOnly = p.boolean(rt.ReadOnly, "trunk.readOnly")
	t.ResourceTools = p.boolean(rt.ResourceTools, "trunk.resourceTools")
	t.ToolSearch = p.boolean(rt.ToolSearch, "trunk.toolSearch")
	t.CodeMode = p.codeMode(rt.CodeMode, "trunk.codeMode")
	t.MaxMessageBytes = DefaultMaxMessageBytes
	limit, field := rt.MaxMessage, "trunk.maxMessageBytes"
	switch {
	case rawAbsent(rt.MaxMessage) && !rawAbsent(rt.MaxResult):
		limit, field = rt.MaxResult, "trunk.maxResultBytes"
	case !rawAbsent(rt.MaxMessage) && !rawAbsent(rt.MaxResult):
		p.addf("trunk.maxResultBytes", "is the old name of trunk.maxMessageBytes: set only one of them")
	}
	if n, ok := p.integer(limit, field); ok && n != 0 {
		if n < MinMessageBytes {
			p.addf(field, "must be at least %d, got %d", MinMessageBytes, n)
		}
		t.MaxMessageBytes = n
	}
	t.Pin = PinWarn
	if pin, ok := p.str(rt.Pin, "trunk.pin"); ok && pin != "" {
		switch pin {
		case PinOff, PinWarn, PinEnforce:
			t.Pin = pin
		default:
			p.addf("trunk.pin", "must be %q, %q or %q, got %q", PinOff, PinWarn, PinEnforce, pin)
		}
	}
	t.Lazy = p.boolean(rt.Lazy, "trunk.lazy")
	t.IdleTimeout = p.duration(rt.IdleTimeout, "trunk.idleTimeout")
	if lf, ok := p.str(rt.LockFile, "trunk.lockFile"); ok {
		t.LockFile = lf
	}
	t.Audit = p.audit(rt.Audit, "trunk.audit")
	t.HTTP = p.httpOptions(rt.HTTP, "trunk.http", lookup)
	t.Metrics = p.metricsOptions(rt.Metrics, "trunk.metrics")
	t.Policy = p.policyOptions(rt.Policy, "trunk.policy")
	t.Profiles, t.ProfileOverrides = p.profiles(rt.Profiles, "trunk.profiles", lookup)
	t.Limits = p.limits(rt.Limits, "trunk.limits")
	t.State = p.state(rt.State, "trunk.state", lookup)
	return t, p.errs
}
