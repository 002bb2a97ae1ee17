package main

import (
	"slices"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/naming"
)

// callServers picks the servers of cfg that may own the exported tool
// name, for `mcptrunk call` to start only those: one server that never
// answers must not hold up a call to another. A namespaced server owns
// only the names of its prefix, so a name that splits into a configured
// server's id needs that server alone. A server without a namespace may
// own any name: it is kept when its cached catalog lists the name, or
// when it has no cached catalog to ask (cached reports that, see
// upstream.CachedTools). When no server is left (a typo, or a cache
// that missed a tool added since) every server without a namespace is
// kept, whose live catalogs then decide. The trunk's own tools see every
// server: all are kept. A tool an override renames is found by its new
// name.
func callServers(cfg *config.Config, name string, cached func(config.Spec) ([]string, bool)) []config.Spec {
	scheme := naming.Scheme{Prefix: cfg.Trunk.Prefix}
	var out, plain []config.Spec
	id, _, split := scheme.Split(name)
	if split && id == naming.TrunkServer {
		return cfg.Servers
	}
	for _, s := range cfg.Servers {
		if s.Unprefixed() {
			if s.Disabled {
				continue
			}
			plain = append(plain, s)
			if tools, ok := cached(s); !ok || slices.Contains(tools, name) || renames(s, tools, name) {
				out = append(out, s)
			}
			continue
		}
		if sid, err := naming.ServerID(s.Name); split && err == nil && sid == id {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return plain
	}
	return out
}

// renames reports whether the server's overrides give one of its cached
// tools the name.
func renames(s config.Spec, tools []string, name string) bool {
	for raw, o := range s.Overrides.Tools {
		if o.Name == name && slices.Contains(tools, raw) {
			return true
		}
	}
	return false
}
