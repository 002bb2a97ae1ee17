package metrics

import "sync"

// other stands for every label value past a label's bound.
const other = "other"

// Bounds on the distinct values of each label. A host can send any method
// and any name, and every distinct value is a series kept for the life of
// the process: past the bound a value is reported as "other", so a host
// (or a model) inventing names cannot grow the trunk's memory or a
// Prometheus server's. The bounds are well above what a real catalog
// needs. cardinalityLimit is the SDK's own bound on one instrument's
// series, set above what the label bounds let through in practice (items
// times outcomes), so that it is only a backstop.
const (
	maxMethods       = 64
	maxServers       = 256
	maxItems         = 1000
	cardinalityLimit = 20000
)

// bounded hands out label values: each value it has seen, until it has
// seen max of them, and "other" for any new value after that. Values seen
// before are found without a lock: that is every request but the first
// of each name.
type bounded struct {
	max  int
	seen sync.Map // string -> struct{}
	mu   sync.Mutex
	n    int // values in seen, under mu
}

func newBounded(max int) *bounded { return &bounded{max: max} }

func (b *bounded) label(v string) string {
	if _, ok := b.seen.Load(v); ok {
		return v
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.seen.Load(v); ok {
		return v
	}
	if b.n >= b.max {
		return other
	}
	b.seen.Store(v, struct{}{})
	b.n++
	return v
}
