package proxy

import "github.com/mcptrunk/mcptrunk/internal/policy"

// MaxMessageBytes is trunk.maxMessageBytes in force now (a reload may
// change it), for the status page, which shows the limit next to the
// notifications it cost.
func (t *Trunk) MaxMessageBytes() int { return t.state.Load().cfg.Trunk.MaxMessageBytes }

// HasProfile reports whether trunk.profiles in force has one of that name.
func (t *Trunk) HasProfile(name string) bool { return t.state.Load().access.HasProfile(name) }

// Operator reports whether a caller signed in with an access token may
// read the operators' pages of serve --http, by trunk.policy.operators in
// force (a reload takes effect at the next request).
func (t *Trunk) Operator(subject string, claims map[string]any) bool {
	return t.state.Load().access.Operator(policy.Caller{Subject: subject, Claims: claims})
}
