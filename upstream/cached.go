package upstream

import (
	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/naming"
	"github.com/mcptrunk/mcptrunk/upstream/catalogcache"
)

// CachedTools returns the names of the tools spec's server listed when its
// catalog was last cached by a Fleet of the same Prefer2025, and whether
// the cache held a usable entry: which server owns a name, known without
// starting any (mcptrunk call). dir "" is catalogcache.DefaultDir. The entry
// may be stale: finding no owner, a caller starts the servers to be sure.
func CachedTools(dir string, spec config.Spec, prefer2025 bool) ([]string, bool) {
	if dir == "" {
		var err error
		if dir, err = catalogcache.DefaultDir(); err != nil {
			return nil, false
		}
	}
	id, err := naming.ServerID(spec.Name)
	if err != nil {
		return nil, false
	}
	e, err := catalogcache.Open(dir).Load(id, specKey(spec, prefer2025))
	if err != nil {
		return nil, false
	}
	names := make([]string, 0, len(e.Tools))
	for _, raw := range e.Tools {
		name, err := itemKey(surfaceTools, raw)
		if err != nil {
			return nil, false
		}
		names = append(names, name)
	}
	return names, true
}
